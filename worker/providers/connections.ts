import { Agent, fetch as undiciFetch } from 'undici';

/**
 * The HTTP connections to the model providers, kept open between calls (issue 21).
 *
 * Node's fetch closes a connection after 4 s idle (when the server gives no `Keep-Alive` hint, as
 * the big providers do not), so the language model's call after a long answer paid a new TCP and
 * TLS handshake (one to three round trips) on the path the respondent waits on. These connections
 * stay open `keepAliveMs` idle (a server's own shorter hint still wins, so a socket the server is
 * about to close is never reused), and `warm()` opens one to each provider that has none, called
 * when the respondent starts speaking: it is ready by the time their turn ends.
 *
 * `keepAliveMs` 0 keeps Node's own fetch, as before.
 */
export interface ConnectionSettings {
  keepAliveMs: number;
  /** Bounds a warming request (it is never retried; a failure only means the next call connects). */
  warmTimeoutMs: number;
}

export class ProviderConnections {
  readonly fetch: typeof fetch | undefined;
  private readonly agent: Agent | null;
  private readonly warmTimeoutMs: number;
  private readonly warming = new Set<string>();

  constructor(settings: ConnectionSettings) {
    this.warmTimeoutMs = settings.warmTimeoutMs;
    if (settings.keepAliveMs <= 0) {
      this.agent = null;
      this.fetch = undefined;
      return;
    }
    const agent = new Agent({ keepAliveTimeout: settings.keepAliveMs, keepAliveMaxTimeout: settings.keepAliveMs });
    this.agent = agent;
    const keptFetch = async (input: string | URL | Request, init: RequestInit = {}) => {
      // A FormData of Node's own fetch is not one to this fetch (another copy of undici): send it
      // as the bytes and content type Node would (the speech-to-text upload).
      if (init.body instanceof FormData) {
        const encoded = new Response(init.body);
        const headers = new Headers(init.headers);
        headers.set('content-type', encoded.headers.get('content-type') ?? 'multipart/form-data');
        init = { ...init, headers, body: Buffer.from(await encoded.arrayBuffer()) };
      }
      return undiciFetch(input as string, { ...(init as object), dispatcher: agent });
    };
    // The `openai` package asks a custom fetch's `Response` whether it can encode a FormData; the
    // conversion above makes Node's own the right answer.
    this.fetch = Object.assign(keptFetch, { Response }) as unknown as typeof fetch;
  }

  /** Open connections to `baseURL`'s origin now (0 when connections are not kept). */
  connectedTo(baseURL: string): number {
    const stats = this.agent?.stats as Record<string, { connected?: number }> | undefined;
    return stats?.[new URL(baseURL).origin]?.connected ?? 0;
  }

  /**
   * Opens a connection to each origin that has none: a GET of the origin's root, without the key
   * (its answer, a 404 or a 401, does not matter; the connection it leaves open does). Not a HEAD:
   * undici closes the connection after one.
   */
  warm(baseURLs: string[]): Promise<void> {
    if (!this.fetch) return Promise.resolve();
    const fetchKept = this.fetch;
    const opening: Array<Promise<unknown>> = [];
    for (const origin of new Set(baseURLs.map((u) => new URL(u).origin))) {
      if (this.warming.has(origin) || this.connectedTo(origin) > 0) continue;
      this.warming.add(origin);
      const open = fetchKept(origin, { method: 'GET', signal: AbortSignal.timeout(this.warmTimeoutMs) })
        .then((res) => res.arrayBuffer())
        // The pool takes the connection back on its next turn of the event loop: settle after it.
        .then(() => new Promise((resolve) => setImmediate(resolve)))
        .catch(() => undefined)
        .finally(() => this.warming.delete(origin));
      opening.push(open);
    }
    return Promise.all(opening).then(() => undefined);
  }

  async close(): Promise<void> {
    await this.agent?.close();
  }
}
