/**
 * The respondent page's HTML for one session. Pure: the route passes the facts in.
 * The JSON config is escaped so that no value can close the script element.
 */
export interface PageFacts {
  sessionId: string;
  interviewId: string;
  title: string;
  status: string;
  language: string;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);

/** JSON safe inside <script type="application/json">: `<`, `>`, `&` and line separators escaped. */
export const scriptJson = (value: unknown): string =>
  JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

export function renderPage(facts: PageFacts, assetBase: string): string {
  const config = scriptJson({ sessionId: facts.sessionId, interviewId: facts.interviewId, title: facts.title, status: facts.status });
  const lang = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/.test(facts.language) ? facts.language : 'en';
  return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(facts.title)}</title>
<link rel="stylesheet" href="${assetBase}/page.css">
</head>
<body>
<main id="interview" class="card" data-state="loading" aria-labelledby="interview-title">
  <p class="eyebrow">Voice interview</p>
  <h1 id="interview-title">${escapeHtml(facts.title)}</h1>
  <div class="status" role="status" aria-live="polite">
    <span class="orb" aria-hidden="true"></span>
    <div>
      <h2 id="state-title" tabindex="-1">Loading…</h2>
      <p id="state-detail"></p>
    </div>
  </div>
  <div class="actions">
    <button id="start" type="button" class="primary" hidden>Start interview</button>
    <button id="retry" type="button" class="primary" hidden>Try again</button>
    <button id="leave" type="button" class="secondary" hidden>Leave interview</button>
  </div>
  <section class="captions" aria-labelledby="captions-title">
    <h2 id="captions-title" class="visually-hidden">Live captions</h2>
    <ol id="captions" role="log" aria-live="polite" aria-relevant="additions"></ol>
    <p id="caption-partial" class="partial" aria-hidden="true"></p>
  </section>
  <p class="note">Your voice is used only for this interview. Captions appear here as you talk.</p>
</main>
<noscript><p class="card">This interview needs JavaScript and a microphone.</p></noscript>
<script type="application/json" id="service-config">${config}</script>
<script type="module" src="${assetBase}/main.js"></script>
</body>
</html>
`;
}
