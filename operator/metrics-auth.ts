/**
 * Who may read the operator's /metrics (METRICS_AUTH=kubernetes, the default): the caller's bearer
 * token is checked with a TokenReview, then its user with a SubjectAccessReview for `get` on the
 * non-resource URL /metrics, as controller-runtime's metrics filter does. A scraper is allowed by
 * binding it to the chart's `<release>-metrics-reader` ClusterRole. Decisions are cached briefly
 * (keyed by a hash of the token, never the token) so a scrape every few seconds costs no API calls;
 * allows and denials in separate caches, so a flood of junk tokens cannot push a scraper out. Reviews
 * of tokens not in the caches are rate-limited (a token bucket): over the rate the caller gets 429 and
 * no review is made, so junk tokens cannot turn into a flood of TokenReviews at the API server.
 * RBAC this file needs: tokenreviews and subjectaccessreviews: create (cluster-scoped).
 */
import { createHash } from 'node:crypto';
import type { KubeClient } from './kube.ts';
import { TokenBucket } from './rate-limit.ts';

export type MetricsDecision = { status: 200 } | { status: 401 | 403 | 429 | 503; message: string };
export type MetricsAuthorizer = (authorization: string | undefined) => Promise<MetricsDecision>;

interface TokenReview {
  status?: {
    authenticated?: boolean;
    user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
    error?: string;
  };
}
interface SubjectAccessReview {
  status?: { allowed?: boolean; reason?: string };
}

export interface MetricsAuthOptions {
  /** How long an allow or a deny is remembered. */
  cacheTtlMs?: number;
  /** At most this many tokens are remembered (the oldest is forgotten first). */
  cacheSize?: number;
  /** Reviews of unknown tokens per second (default 5), and how many may come at once (default 20). */
  reviewsPerSecond?: number;
  reviewBurst?: number;
  now?: () => number;
}

/** A map that forgets its oldest entry beyond `size` and every entry after `ttl`. */
class ExpiringCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  private readonly size: number;
  private readonly ttl: number;
  private readonly now: () => number;

  constructor(size: number, ttl: number, now: () => number) {
    this.size = size;
    this.ttl = ttl;
    this.now = now;
  }

  get(key: string): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.until > this.now()) return hit.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { value, until: this.now() + this.ttl });
    if (this.entries.size > this.size) this.entries.delete(this.entries.keys().next().value!);
  }
}

export function kubernetesMetricsAuthorizer(kube: KubeClient, options: MetricsAuthOptions = {}): MetricsAuthorizer {
  const ttl = options.cacheTtlMs ?? 60_000;
  const size = options.cacheSize ?? 256;
  const now = options.now ?? Date.now;
  const allowed = new ExpiringCache<MetricsDecision>(size, ttl, now);
  const denied = new ExpiringCache<MetricsDecision>(size, ttl, now);
  const reviews = new TokenBucket({ qps: options.reviewsPerSecond ?? 5, burst: options.reviewBurst ?? 20, now });
  /** Reviews under way by token hash: concurrent scrapes with one token make one review. */
  const pending = new Map<string, Promise<MetricsDecision>>();

  const decide = async (token: string): Promise<MetricsDecision> => {
    const review = await kube.request<TokenReview>('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
    });
    const user = review.status?.user;
    if (!review.status?.authenticated || !user?.username) return { status: 401, message: 'the bearer token is not valid for this cluster' };
    const access = await kube.request<SubjectAccessReview>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: user.username,
          uid: user.uid,
          groups: user.groups ?? [],
          extra: user.extra ?? {},
          nonResourceAttributes: { path: '/metrics', verb: 'get' },
        },
      },
    });
    if (!access.status?.allowed)
      return { status: 403, message: `${user.username} may not get /metrics: bind it to the metrics-reader ClusterRole` };
    return { status: 200 };
  };

  return async (authorization) => {
    const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
    if (!token) return { status: 401, message: 'send a bearer token (a service account token of a metrics reader)' };
    const key = createHash('sha256').update(token).digest('hex');
    const known = allowed.get(key) ?? denied.get(key) ?? pending.get(key);
    if (known) return known;
    if (!reviews.tryTake()) return { status: 429, message: 'too many unknown tokens lately; try again in a few seconds' };
    const review = decide(token).then(
      (decision) => {
        (decision.status === 200 ? allowed : denied).set(key, decision);
        return decision;
      },
      // The API server is away: say so, and remember nothing.
      (): MetricsDecision => ({ status: 503, message: 'the API server could not check the token; try again' }),
    );
    pending.set(key, review);
    try {
      return await review;
    } finally {
      pending.delete(key);
    }
  };
}
