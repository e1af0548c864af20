import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { hostOf, resolveTarget, type EgressPolicy, type ResolvedAddress } from './egress-guard.ts';
import { classifySocketError, OutboundError } from './outbound-error.ts';

/**
 * The one way the api-stub sends JSON to a URL it does not own (pipeline spawns, webhooks):
 * URL and scheme checked, address resolved and vetted by the egress guard, the connection pinned to
 * that address, TLS verified against the default roots plus any configured extra CA, and everything
 * bounded by the caller's AbortSignal (its deadline covers DNS, connect, TLS, upload and the answer).
 */
export interface PostJsonOptions {
  url: string;
  /** The exact bytes to send (already serialized: webhooks sign these bytes). */
  body: string;
  headers?: Record<string, string>;
  signal: AbortSignal;
  /** Refuse anything but https:. Pipeline endpoints always; webhook URLs unless allow-listed. */
  httpsOnly: boolean;
  policy: EgressPolicy;
  /** Trusted CA certificates (PEM) for https; undefined means Node's defaults. */
  ca?: string[];
  /** Bytes of the answer kept; the rest is read and dropped. */
  maxResponseBytes?: number;
}

export interface PostJsonResult {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  truncated: boolean;
  durationMs: number;
}

export function parseTargetUrl(raw: string, httpsOnly: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundError('invalid_url', 'The URL is not a valid absolute URL.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new OutboundError('invalid_url', `The URL scheme ${url.protocol} is not supported.`);
  if (httpsOnly && url.protocol !== 'https:') throw new OutboundError('https_required', `The URL for ${hostOf(url)} must use https://.`);
  if (url.username || url.password) throw new OutboundError('invalid_url', 'The URL must not carry credentials.');
  return url;
}

/** Answers the socket's own lookup with the vetted addresses only, so DNS is not asked a second time. */
function pinnedLookup(targets: readonly ResolvedAddress[]): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all)
      callback(
        null,
        targets.map((t) => ({ address: t.address, family: t.family })),
      );
    else callback(null, targets[0]!.address, targets[0]!.family);
  }) as unknown as LookupFunction;
}

export async function postJson(options: PostJsonOptions): Promise<PostJsonResult> {
  const started = performance.now();
  const url = parseTargetUrl(options.url, options.httpsOnly);
  const host = hostOf(url);
  const targets = await resolveTarget(url, options.policy, options.signal);
  const limit = options.maxResponseBytes ?? 64 * 1024;
  const body = Buffer.from(options.body, 'utf8');
  const secure = url.protocol === 'https:';

  return new Promise<PostJsonResult>((resolve, reject) => {
    let settled = false;
    const fail = (err: OutboundError) => {
      if (settled) return;
      settled = true;
      options.signal.removeEventListener('abort', onAbort);
      req.destroy();
      reject(err);
    };
    const onAbort = () => fail(OutboundError.fromAbort(options.signal, `calling ${host}`));
    const send = secure ? httpsRequest : httpRequest;
    const req = send({
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port || (secure ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      headers: { 'content-type': 'application/json', 'content-length': String(body.length), ...options.headers },
      lookup: pinnedLookup(targets),
      agent: false,
      ...(secure && options.ca ? { ca: options.ca } : {}),
    });
    req.on('error', (err) => fail(classifySocketError(err, host)));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      let truncated = false;
      res.on('data', (chunk: Buffer) => {
        if (kept < limit) {
          const slice = chunk.subarray(0, limit - kept);
          chunks.push(slice);
          kept += slice.length;
          if (slice.length < chunk.length) truncated = true;
        } else {
          truncated = true;
        }
      });
      res.on('error', (err) => fail(classifySocketError(err, host)));
      res.on('end', () => {
        if (settled) return;
        settled = true;
        options.signal.removeEventListener('abort', onAbort);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          truncated,
          durationMs: Math.round(performance.now() - started),
        });
      });
    });
    if (options.signal.aborted) return onAbort();
    options.signal.addEventListener('abort', onAbort, { once: true });
    req.end(body);
  });
}
