/**
 * Who may read the operator's /metrics (METRICS_AUTH=kubernetes, the default): the caller's bearer
 * token is checked with a TokenReview, then its user with a SubjectAccessReview for `get` on the
 * non-resource URL /metrics, as controller-runtime's metrics filter does. A scraper is allowed by
 * binding it to the chart's `<release>-metrics-reader` ClusterRole. Decisions are cached briefly
 * (keyed by a hash of the token, never the token) so a scrape every few seconds costs no API calls.
 * RBAC this file needs: tokenreviews and subjectaccessreviews: create (cluster-scoped).
 */
import { createHash } from 'node:crypto';
import type { KubeClient } from './kube.ts';

export type MetricsDecision = { status: 200 } | { status: 401 | 403 | 503; message: string };
export type MetricsAuthorizer = (authorization: string | undefined) => Promise<MetricsDecision>;

interface TokenReview {
  status?: { authenticated?: boolean; user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> }; error?: string };
}
interface SubjectAccessReview {
  status?: { allowed?: boolean; reason?: string };
}

export interface MetricsAuthOptions {
  /** How long an allow or a deny is remembered. */
  cacheTtlMs?: number;
  /** At most this many tokens are remembered (the oldest is forgotten first). */
  cacheSize?: number;
  now?: () => number;
}

export function kubernetesMetricsAuthorizer(kube: KubeClient, options: MetricsAuthOptions = {}): MetricsAuthorizer {
  const ttl = options.cacheTtlMs ?? 60_000;
  const size = options.cacheSize ?? 256;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { decision: MetricsDecision; until: number }>();

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
        spec: { user: user.username, uid: user.uid, groups: user.groups ?? [], extra: user.extra ?? {}, nonResourceAttributes: { path: '/metrics', verb: 'get' } },
      },
    });
    if (!access.status?.allowed) return { status: 403, message: `${user.username} may not get /metrics: bind it to the metrics-reader ClusterRole` };
    return { status: 200 };
  };

  return async (authorization) => {
    const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
    if (!token) return { status: 401, message: 'send a bearer token (a service account token of a metrics reader)' };
    const key = createHash('sha256').update(token).digest('hex');
    const hit = cache.get(key);
    if (hit && hit.until > now()) return hit.decision;
    let decision: MetricsDecision;
    try {
      decision = await decide(token);
    } catch {
      // The API server is away: say so, and remember nothing.
      return { status: 503, message: 'the API server could not check the token; try again' };
    }
    cache.delete(key);
    cache.set(key, { decision, until: now() + ttl });
    if (cache.size > size) cache.delete(cache.keys().next().value!);
    return decision;
  };
}
