import { HttpError } from '../../lib/errors.ts';
import type { Database } from '../db/database.ts';
import { countHeldHostedSessions, heldHostedByWorkspace } from '../store/report-tokens.ts';

/**
 * A workspace's fair share of the shared hosted pool (issue 19). A fixed cap per workspace (20 by
 * default) does not protect a pool smaller than it: one publishable key took both slots of a 2-slot
 * pool and every other workspace got 503. So the cap is also a share of the pool's capacity:
 *
 *   share = max(1, floor(capacity / (active + 1)))
 *
 * where `active` counts the workspaces holding hosted sessions now, the asking one included, and the
 * `+ 1` keeps a share free for a workspace that has not come yet. Alone on 2 slots a workspace may hold
 * 1; on 100 slots 50, and 33 each once a second one is active. Sessions already held are never cut;
 * a workspace over its share simply cannot start more until some end. The configured cap
 * (HOSTED_SESSIONS_PER_WORKSPACE) still bounds the share.
 *
 * The capacity is HOSTED_PIPELINE_CAPACITY when set. Otherwise it is learned from the pool itself:
 * when it refuses a spawn because no warm slot is free (503 `no_capacity`; other 503s, such as a
 * draining replica, teach nothing) while we hold T ≥ 1 hosted sessions, its capacity is taken to be
 * T; when it later takes a spawn with more held than that, the estimate rises to match. The estimate
 * is forgotten LEARNED_CAPACITY_MEMORY_MS after the last such refusal (a pool that grew, or a refusal
 * that was a passing fault, must not cap workspaces for good), and lives in memory only. Without
 * either, only the configured cap applies.
 */
export const LEARNED_CAPACITY_MEMORY_MS = 10 * 60_000;

export interface HostedCapacity {
  /** Slots of the hosted pool at `now`: configured, else learned and not yet forgotten, else null. */
  current(now: number): number | null;
  /** The pool said it was full (503 no_capacity) while `heldTotal` hosted sessions (all workspaces) were held. */
  noteRefused(heldTotal: number, now: number): void;
  /** The pool took a spawn; `heldTotal` counts the hosted sessions held, this one included (asked only when needed). */
  noteAccepted(heldTotal: () => number): void;
}

export function createHostedCapacity(configured: number | null): HostedCapacity {
  let learned: { slots: number; at: number } | null = null;
  return {
    current(now) {
      if (configured !== null) return configured;
      if (learned && now - learned.at >= LEARNED_CAPACITY_MEMORY_MS) learned = null;
      return learned?.slots ?? null;
    },
    noteRefused(heldTotal, now) {
      // A refusal while we hold nothing says the pool is busy with work we do not see, not its size.
      if (heldTotal >= 1) learned = { slots: heldTotal, at: now };
    },
    noteAccepted(heldTotal) {
      if (learned === null) return;
      const total = heldTotal();
      if (total > learned.slots) learned = { ...learned, slots: total };
    },
  };
}

/** Pure: the most hosted sessions a workspace may hold now. */
export function hostedShare(input: { capacity: number | null; configuredCap: number; activeWorkspaces: number }): number {
  if (input.capacity === null) return input.configuredCap;
  return Math.min(input.configuredCap, Math.max(1, Math.floor(input.capacity / (input.activeWorkspaces + 1))));
}

export interface HostedShareContext {
  db: Database;
  capacity: HostedCapacity;
  configuredCap: number;
  now: number;
  /** Spawns older than this no longer hold a slot (the hold time has passed). */
  since: number;
}

/** Throws 429 when `workspaceId` already holds its share; `sessionId` (reconnecting) is not counted. */
export function enforceHostedShare(ctx: HostedShareContext, workspaceId: string, sessionId: string): void {
  const capacity = ctx.capacity.current(ctx.now);
  // Without a known capacity only this workspace's own count matters (the cheaper query).
  const held =
    capacity === null
      ? new Map([[workspaceId, countHeldHostedSessions(ctx.db, workspaceId, ctx.since, sessionId)]])
      : heldHostedByWorkspace(ctx.db, ctx.since, sessionId);
  const mine = held.get(workspaceId) ?? 0;
  const share = hostedShare({ capacity, configuredCap: ctx.configuredCap, activeWorkspaces: held.size + (held.has(workspaceId) ? 0 : 1) });
  if (mine < share) return;
  const why =
    capacity !== null && share < ctx.configuredCap
      ? `its fair share of the pool's ${capacity} slots while ${held.size} workspace${held.size === 1 ? '' : 's'} use it`
      : 'its limit at once';
  throw new HttpError(
    'rate_limit_exceeded',
    `This workspace already holds ${mine} voice sessions on the hosted pipeline, ${why}. Retry when one ends, or self-host a worker.`,
    { 'Retry-After': '30' },
  );
}

/** Total hosted sessions held now, all workspaces (for learning the capacity). */
export function heldHostedTotal(db: Database, since: number): number {
  let total = 0;
  for (const n of heldHostedByWorkspace(db, since, '').values()) total += n;
  return total;
}
