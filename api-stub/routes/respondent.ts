import { Router, type Response } from 'express';
import { hasIdForm } from '../../lib/ids.ts';
import type { AppDeps } from '../deps.ts';
import { getAsset } from '../respondent/assets.ts';
import { escapeHtml, renderPage } from '../respondent/page.ts';
import { getDeployment } from '../store/deployments.ts';
import { markClicked } from '../store/sessions.ts';

/**
 * The respondent page at sessionUrl (`/s/<sessionId>?from=sdk`), its assets, and the browser SDK
 * bundle. Opening the page marks the session CLICKED (idempotent). See docs/respondent-page.md.
 */
export const ASSET_BASE = '/respondent/assets';
export const SDK_BUNDLE_PATH = '/sdk/browser.js';

// The page talks to its own origin (connect), to worker rooms over WebSocket and, for hosted rooms,
// to the provider's servers; it may be framed by any customer's site (that is what the SDK does).
const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self' https://*.daily.co",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self' ws: wss: https:",
  "media-src 'self' blob: mediastream:",
  "img-src 'self' data:",
  "worker-src 'self' blob:",
  'frame-src https://*.daily.co',
  "base-uri 'none'",
  "form-action 'none'",
  'frame-ancestors *',
].join('; ');

function sendMissing(res: Response, wantsHtml: boolean, status: number, title: string, message: string, code: string): void {
  res.status(status).setHeader('Cache-Control', 'no-store');
  if (!wantsHtml) {
    res.json({ error: code, message });
    return;
  }
  res
    .type('html')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" ` +
        `content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><link rel="stylesheet" ` +
        `href="${ASSET_BASE}/page.css"></head><body><main class="card" ` +
        `data-state="closed"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></main></body></html>`,
    );
}

export function respondentRouter(deps: AppDeps): Router {
  const router = Router();

  router.get('/s/:sessionId', (req, res) => {
    const wantsHtml = req.accepts(['html', 'json']) === 'html';
    const sessionId = String(req.params.sessionId);
    if (!hasIdForm(sessionId, 'inv')) {
      return sendMissing(
        res,
        wantsHtml,
        404,
        'Interview not found',
        'This interview link is not valid. Check the address you were given.',
        'session_not_found',
      );
    }
    const now = deps.clock();
    const opened = markClicked(deps.db, sessionId, now);
    if (opened.kind === 'not_found') {
      return sendMissing(
        res,
        wantsHtml,
        404,
        'Interview not found',
        'This interview link is not valid. Check the address you were given.',
        'session_not_found',
      );
    }
    const session = opened.session;
    const deployment = getDeployment(deps.db, session.deploymentId);
    const expired = session.status === 'EXPIRED' || (session.status !== 'COMPLETED' && session.expiresAt <= now);
    if (opened.kind === 'moved') deps.log.info('respondent page opened', { sessionId, from: opened.from, to: session.status });
    res.setHeader('Content-Security-Policy', PAGE_CSP);
    res.setHeader('Permissions-Policy', 'microphone=(self), autoplay=(self), camera=()');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-store');
    res.type('html').send(
      renderPage(
        {
          sessionId,
          interviewId: session.deploymentId,
          title: deployment?.interview.title ?? 'Voice interview',
          language: deployment?.interview.language ?? 'en',
          status: expired ? 'EXPIRED' : session.status,
        },
        ASSET_BASE,
      ),
    );
  });

  const serveAsset = (name: string, res: Response, crossOrigin: boolean, next: (err?: unknown) => void): void => {
    const pending = getAsset(name);
    if (!pending) return next();
    pending.then(
      (asset) => {
        res.setHeader('Content-Type', asset.contentType);
        res.setHeader('X-Content-Type-Options', 'nosniff');
        res.setHeader('Cache-Control', 'public, max-age=300');
        // Host pages on other origins import the SDK as a module, which needs CORS.
        if (crossOrigin) res.setHeader('Access-Control-Allow-Origin', '*');
        res.send(asset.body);
      },
      (err: unknown) => next(err),
    );
  };

  router.get(`${ASSET_BASE}/:name`, (req, res, next) => serveAsset(String(req.params.name), res, false, next));
  router.get(SDK_BUNDLE_PATH, (_req, res, next) => serveAsset('browser.js', res, true, next));
  return router;
}
