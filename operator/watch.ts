/**
 * An informer: list, then watch from the list's resourceVersion, forever. A watch the server ends
 * is resumed from the last seen version; 410 Gone (expired version) relists; any other error waits
 * with exponential backoff and tries again. It relists on a timer too, so nothing is missed for long
 * (from the API server's watch cache: not older than the last version seen, never a quorum read).
 * Each lifecycle step is named so logs and metrics can say which one happened.
 */
import { clampDelay } from './delay.ts';
import { isGone, KubeError, type KubeClient, type WatchLine } from './kube.ts';

export type WatchLifecycle = 'listed' | 'watch-started' | 'watch-ended' | 'gone' | 'error';
export type ObjectEvent = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface KubeItem {
  metadata: { name: string; namespace?: string; resourceVersion?: string; [k: string]: unknown };
  [k: string]: unknown;
}

export interface InformerOptions {
  kube: KubeClient;
  /** Collection path, e.g. /apis/apps/v1/deployments or a namespaced one. */
  path: string;
  /** A short name for logs and metrics. */
  resource: string;
  labelSelector?: string;
  onEvent: (type: ObjectEvent, object: KubeItem) => void;
  onLifecycle?: (event: WatchLifecycle, detail?: string) => void;
  /** Relist at least this often (default 10 minutes). */
  relistMs?: number;
  /** Server-side watch timeout in seconds (default 300) and client idle limit derived from it. */
  watchTimeoutSeconds?: number;
  maxBackoffMs?: number;
  /** What of each object to keep (cache-transform.ts); the cache and onEvent see only that. */
  transform?: (object: KubeItem) => KubeItem;
  /** Watch from this version without listing first (resuming after a restart; tests use it). */
  initialResourceVersion?: string;
}

const keyOf = (o: KubeItem): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

export class Informer {
  private readonly cache = new Map<string, KubeItem>();
  private readonly controller = new AbortController();
  private rv: string | undefined;
  private lastList = 0;
  private running: Promise<void> | undefined;
  private syncedOnce = false;
  private readonly opts: InformerOptions;
  private markSynced!: () => void;
  /** Settles once the first list has filled the cache (or when the informer stops). */
  readonly whenSynced: Promise<void> = new Promise((resolve) => (this.markSynced = resolve));

  constructor(opts: InformerOptions) {
    this.opts = opts;
    if (opts.initialResourceVersion) {
      this.rv = opts.initialResourceVersion;
      this.lastList = Date.now();
      this.syncedOnce = true;
      this.markSynced();
    }
  }

  get synced(): boolean {
    return this.syncedOnce;
  }

  items(): KubeItem[] {
    return [...this.cache.values()];
  }

  get(key: string): KubeItem | undefined {
    return this.cache.get(key);
  }

  start(): void {
    this.running ??= this.loop();
  }

  async stop(): Promise<void> {
    this.controller.abort();
    this.markSynced(); // nobody waits forever on a stopped informer
    await this.running;
  }

  private async loop(): Promise<void> {
    const { signal } = this.controller;
    let backoff = 250;
    while (!signal.aborted) {
      try {
        if (this.rv === undefined || Date.now() - this.lastList > (this.opts.relistMs ?? 600_000)) await this.list();
        this.opts.onLifecycle?.('watch-started');
        const timeoutSeconds = this.opts.watchTimeoutSeconds ?? 300;
        await this.opts.kube.watch(
          this.opts.path,
          { resourceVersion: this.rv, allowWatchBookmarks: true, timeoutSeconds, labelSelector: this.opts.labelSelector },
          (line) => this.handle(line),
          { signal, idleMs: (timeoutSeconds + 30) * 1000 },
        );
        if (!signal.aborted) this.opts.onLifecycle?.('watch-ended');
        backoff = 250;
      } catch (err) {
        if (signal.aborted) break;
        if (isGone(err)) {
          this.opts.onLifecycle?.('gone');
          this.rv = undefined;
          continue;
        }
        this.opts.onLifecycle?.('error', err instanceof Error ? err.message : String(err));
        await sleep(backoff + Math.random() * backoff * 0.2, signal);
        backoff = Math.min(backoff * 2, this.opts.maxBackoffMs ?? 30_000);
      }
    }
  }

  private async list(): Promise<void> {
    const seen = new Set<string>();
    let cont: string | undefined;
    let rv: string;
    // The periodic relist needs nothing older than what the watch already showed: asked so, the API
    // server may answer from its watch cache instead of a quorum read of etcd for the whole
    // collection. The first list, and one after 410 Gone (no version), read the latest state.
    const since = this.rv === undefined ? {} : { resourceVersion: this.rv, resourceVersionMatch: 'NotOlderThan' };
    do {
      const page = await this.opts.kube.request<{ metadata: { resourceVersion: string; continue?: string }; items: KubeItem[] }>(
        'GET',
        this.opts.path,
        {
          // A continued page carries its version in the token (the server refuses both).
          query: { labelSelector: this.opts.labelSelector, limit: 500, continue: cont, ...(cont ? {} : since) },
        },
      );
      for (const raw of page.items) {
        const item = this.opts.transform ? this.opts.transform(raw) : raw;
        const key = keyOf(item);
        seen.add(key);
        const old = this.cache.get(key);
        this.cache.set(key, item);
        if (!old || old.metadata.resourceVersion !== item.metadata.resourceVersion) this.opts.onEvent(old ? 'MODIFIED' : 'ADDED', item);
      }
      cont = page.metadata.continue || undefined;
      rv = page.metadata.resourceVersion;
    } while (cont);
    // Deletions that happened while no watch was open.
    for (const [key, item] of this.cache) {
      if (!seen.has(key)) {
        this.cache.delete(key);
        this.opts.onEvent('DELETED', item);
      }
    }
    this.rv = rv;
    this.lastList = Date.now();
    this.syncedOnce = true;
    this.markSynced();
    this.opts.onLifecycle?.('listed', `${seen.size} items`);
  }

  private handle(line: WatchLine): void {
    if (line.type === 'ERROR') {
      const status = line.object as { code?: number; reason?: string; message?: string };
      throw new KubeError(status.code ?? 500, status.reason ?? 'Unknown', `watch ${this.opts.path}: ${status.message ?? 'error event'}`);
    }
    const raw = line.object as unknown as KubeItem;
    if (raw.metadata?.resourceVersion) this.rv = raw.metadata.resourceVersion;
    if (line.type === 'BOOKMARK') return;
    const object = this.opts.transform ? this.opts.transform(raw) : raw;
    const key = keyOf(object);
    if (line.type === 'DELETED') this.cache.delete(key);
    else this.cache.set(key, object);
    this.opts.onEvent(line.type, object);
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, clampDelay(ms));
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
