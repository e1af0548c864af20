/**
 * A thin Kubernetes REST client over node:https. Authentication and TLS come from a kubeconfig
 * (or the in-cluster service account) through @kubernetes/client-node's KubeConfig; requests and
 * watches are plain HTTP so that server-side apply, raw JSON and long-lived watches are explicit.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { Agent, request, type AgentOptions, type RequestOptions } from 'node:https';
import { createInterface } from 'node:readline';
import { TokenBucket } from './rate-limit.ts';

/** Observes every API call: metrics count them, the operator logs the server's warnings. */
export interface RequestObserver {
  onResponse?(method: string, code: number, path: string): void;
  onWarning?(warning: string, method: string, path: string): void;
}

export interface ClientOptions {
  /** Client-side rate limit of requests (watches excepted); none when absent. */
  qps?: number;
  burst?: number;
  /** The User-Agent of every request and watch (audit logs and API priority rules key on it). */
  userAgent?: string;
}

/** client-go's form: `<program>/<version> (<os>/<arch>) <component>`. */
export const DEFAULT_USER_AGENT = `voice-operator/v1.3.0 (${process.platform}/${process.arch}) node/${process.version}`;

/** `Warning: 299 - "text"` headers (RFC 7234 format, as the API server sends them) to their text. */
export function warningTexts(header: string | string[] | undefined): string[] {
  const values = header === undefined ? [] : Array.isArray(header) ? header : [header];
  return values.flatMap((v) => [...v.matchAll(/\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\(.)/g, '$1')));
}

export class KubeError extends Error {
  readonly status: number;
  readonly reason: string;
  constructor(status: number, reason: string, message: string) {
    super(message);
    this.name = 'KubeError';
    this.status = status;
    this.reason = reason;
  }
}

export const isNotFound = (err: unknown): boolean => err instanceof KubeError && err.status === 404;
export const isConflict = (err: unknown): boolean => err instanceof KubeError && err.status === 409;
export const isGone = (err: unknown): boolean => err instanceof KubeError && err.status === 410;

export interface ResourceRef {
  group: string; // '' for the core group
  version: string;
  plural: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

export function resourcePath(r: ResourceRef): string {
  const base = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  const ns = r.namespace ? `/namespaces/${encodeURIComponent(r.namespace)}` : '';
  const name = r.name ? `/${encodeURIComponent(r.name)}` : '';
  const sub = r.name && r.subresource ? `/${r.subresource}` : '';
  return `${base}${ns}/${r.plural}${name}${sub}`;
}

export interface RequestInit {
  body?: unknown;
  contentType?: string;
  query?: Record<string, string | number | boolean | undefined>;
  timeoutMs?: number;
  /** Aborting it destroys the request (and refuses it if already aborted). */
  signal?: AbortSignal;
}

export interface WatchLine {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: Record<string, unknown>;
}

function withQuery(path: string, query: RequestInit['query']): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

export class KubeClient {
  readonly server: URL;
  private readonly tls: RequestOptions;
  /** Authorization headers; re-read on a timer because in-cluster service-account tokens rotate. */
  private authHeaders: Record<string, string> = {};
  private refresher: NodeJS.Timeout | undefined;
  private readonly agent: Agent;
  private readonly watchAgent: Agent;
  private readonly observers = new Set<RequestObserver>();
  private limiter: TokenBucket | undefined;
  /** Set on a scoped view: every request and watch of that view ends when it aborts. */
  private scope: AbortSignal | undefined;
  private userAgent = DEFAULT_USER_AGENT;

  private constructor(server: URL, tls: RequestOptions) {
    this.server = server;
    this.tls = tls;
    this.authHeaders = { ...(tls.headers as Record<string, string> | undefined) };
    this.agent = new Agent({ keepAlive: true, maxSockets: 32, ...pickTls(tls) });
    this.watchAgent = new Agent({ keepAlive: false, ...pickTls(tls) });
  }

  /** From a kubeconfig file, or the in-cluster service account when `file` is undefined and none is set. */
  static async fromKubeConfig(file?: string, options: ClientOptions = {}): Promise<KubeClient> {
    const kc = new KubeConfig();
    if (file) kc.loadFromFile(file);
    else kc.loadFromDefault();
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster; set KUBECONFIG or run in a cluster');
    // With no kubeconfig anywhere and no in-cluster account, client-node falls back to
    // http://localhost:8080 and later fails with a message about TLS; say what is missing instead.
    if (!file && !process.env.KUBERNETES_SERVICE_HOST && cluster.server.startsWith('http:')) {
      throw new Error(
        `no Kubernetes configuration found (only the fallback ${cluster.server}): set KUBECONFIG to a kubeconfig file, or run the operator in a cluster`,
      );
    }
    const opts: RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    const client = new KubeClient(new URL(cluster.server), opts);
    client.userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
    if (options.qps !== undefined)
      client.limiter = new TokenBucket({ qps: options.qps, burst: options.burst ?? Math.ceil(options.qps * 1.5) });
    client.refresher = setInterval(() => {
      const fresh: RequestOptions = {};
      kc.applyToHTTPSOptions(fresh).then(
        () => (client.authHeaders = { ...(fresh.headers as Record<string, string> | undefined) }),
        () => undefined, // keep the previous headers; the next round tries again
      );
    }, 60_000);
    client.refresher.unref();
    return client;
  }

  /**
   * A view of this client (same connections, credentials, limiter and observers) whose requests
   * and watches are all cut off when `signal` aborts: a leader's term ends, and nothing it started
   * may still reach the API server afterwards.
   */
  scoped(signal: AbortSignal): KubeClient {
    const view = Object.create(this) as KubeClient;
    view.scope = signal;
    return view;
  }

  /** Adds an observer; returns its removal. */
  observe(observer: RequestObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  close(): void {
    clearInterval(this.refresher);
    this.agent.destroy();
    this.watchAgent.destroy();
  }

  async request<T = Record<string, unknown>>(method: string, path: string, init: RequestInit = {}): Promise<T> {
    const signal = init.signal ?? this.scope;
    const refuse = () => new Error(`${method} ${path}: aborted (the caller stopped, e.g. this replica no longer leads)`);
    if (signal?.aborted) throw refuse();
    if (this.limiter) await this.limiter.take();
    if (signal?.aborted) throw refuse();
    const payload = init.body === undefined ? undefined : Buffer.from(JSON.stringify(init.body));
    const headers: Record<string, string | number> = { ...this.authHeaders, accept: 'application/json', 'user-agent': this.userAgent };
    if (payload) Object.assign(headers, { 'content-type': init.contentType ?? 'application/json', 'content-length': payload.length });
    return new Promise<T>((resolve, reject) => {
      const req = request(
        { ...this.target(withQuery(path, init.query)), method, headers, agent: this.agent, timeout: init.timeoutMs ?? 30_000 },
        (res) => {
          for (const o of this.observers) {
            o.onResponse?.(method, res.statusCode ?? 0, path);
            if (o.onWarning) for (const w of warningTexts(res.headers.warning)) o.onWarning(w, method, path);
          }
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            let json: Record<string, unknown>;
            try {
              json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
            } catch {
              json = { message: text.slice(0, 200) };
            }
            if (status >= 200 && status < 300) return resolve(json as T);
            reject(
              new KubeError(
                status,
                String(json.reason ?? 'Unknown'),
                `${method} ${path}: ${status} ${String(json.message ?? res.statusMessage ?? '')}`,
              ),
            );
          });
        },
      );
      const onAbort = () => req.destroy(refuse());
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('close', () => signal?.removeEventListener('abort', onAbort));
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${init.timeoutMs ?? 30_000} ms`)));
      req.on('error', (err) => {
        for (const o of this.observers) o.onResponse?.(method, 0, path); // no answer: the metric's code "<error>"
        reject(err);
      });
      req.end(payload);
    });
  }

  get<T = Record<string, unknown>>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  /**
   * Server-side apply: always the apply-patch content type, one field manager, force, and strict
   * field validation (an unknown or duplicate field is an error, not silently dropped).
   */
  apply<T = Record<string, unknown>>(
    path: string,
    object: unknown,
    fieldManager: string,
    options: { timeoutMs?: number } = {},
  ): Promise<T> {
    return this.request<T>('PATCH', path, {
      body: object,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager, force: true, fieldValidation: 'Strict' },
      ...options,
    });
  }

  /** A JSON merge patch, recorded in managedFields under `fieldManager` (not a name guessed from the User-Agent). */
  mergePatch<T = Record<string, unknown>>(path: string, patch: unknown, fieldManager?: string): Promise<T> {
    return this.request<T>('PATCH', path, {
      body: patch,
      contentType: 'application/merge-patch+json',
      ...(fieldManager ? { query: { fieldManager } } : {}),
    });
  }

  /**
   * One watch request, streamed line by line until the server ends it, `signal` aborts it, or no
   * byte arrives for `idleMs` (bookmarks keep a healthy quiet watch alive well below that).
   */
  watch(
    path: string,
    query: RequestInit['query'],
    onLine: (line: WatchLine) => void,
    options: { signal: AbortSignal; idleMs: number },
  ): Promise<void> {
    if (this.scope) options = { ...options, signal: AbortSignal.any([options.signal, this.scope]) };
    return new Promise<void>((resolve, reject) => {
      if (options.signal.aborted) return resolve();
      const headers = { ...this.authHeaders, accept: 'application/json', 'user-agent': this.userAgent };
      const req = request({ ...this.target(withQuery(path, { ...query, watch: true })), method: 'GET', headers, agent: this.watchAgent });
      let idle: NodeJS.Timeout | undefined;
      const arm = () => {
        clearTimeout(idle);
        idle = setTimeout(() => req.destroy(new Error(`watch ${path}: no data for ${options.idleMs} ms`)), options.idleMs);
      };
      const onAbort = () => req.destroy();
      options.signal.addEventListener('abort', onAbort, { once: true });
      // An error raised while handling a line (e.g. an ERROR event) wins over the close it causes.
      let failure: Error | undefined;
      let settled = false;
      const finish = (err?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(idle);
        options.signal.removeEventListener('abort', onAbort);
        const cause = failure ?? err;
        if (cause && !options.signal.aborted) reject(cause);
        else resolve();
      };
      req.on('error', finish);
      req.on('response', (res) => {
        if (res.statusCode !== 200) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            let reason = 'Unknown';
            try {
              reason = String((JSON.parse(Buffer.concat(chunks).toString()) as { reason?: string }).reason ?? reason);
            } catch {
              /* keep Unknown */
            }
            finish(new KubeError(res.statusCode ?? 0, reason, `watch ${path}: ${res.statusCode}`));
          });
          return;
        }
        req.setNoDelay(true);
        req.socket?.setKeepAlive(true, 30_000);
        arm();
        res.on('data', arm);
        const lines = createInterface({ input: res });
        // readline re-emits the response's errors (e.g. "aborted" when we stop): handled via `res`.
        lines.on('error', () => undefined);
        lines.on('line', (line) => {
          if (!line.trim()) return;
          try {
            onLine(JSON.parse(line) as WatchLine);
          } catch (err) {
            failure ??= err instanceof Error ? err : new Error(String(err));
            lines.close();
            req.destroy(failure);
          }
        });
        res.on('error', finish);
        res.on('close', () => finish());
      });
      req.end();
    });
  }

  private target(path: string): RequestOptions {
    return {
      protocol: 'https:',
      hostname: this.server.hostname,
      port: this.server.port || 443,
      path: `${this.server.pathname.replace(/\/$/, '')}${path}`,
    };
  }
}

function pickTls(o: RequestOptions): AgentOptions {
  const out: AgentOptions = {};
  for (const k of ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const) {
    if (o[k] !== undefined) (out as Record<string, unknown>)[k] = o[k];
  }
  return out;
}
