import { randomBytes } from 'node:crypto';
import type { Logger } from '../../lib/log.ts';
import type { Clock } from '../../lib/time.ts';
import { transaction, type Database } from '../db/database.ts';
import type { EgressPolicy } from '../outbound/egress-guard.ts';
import { attemptDelivery, type AttemptResult } from './deliver.ts';
import { recordAttemptStart, settleDelivery, type DeliveryOutcome } from './delivery-log.ts';
import { claimDue, countAttemptStart, settle, type ClaimedDelivery, type Settlement } from './outbox-store.ts';
import { isRetryable, retryDelay } from './retry-policy.ts';
import { openEndpointSecrets } from './endpoint-secrets.ts';
import type { KeyProvider } from '../crypto/key-provider.ts';

/**
 * The outbox dispatcher: a loop beside the HTTP server that claims due outbox rows (with a lease),
 * makes one attempt each, logs the attempt and settles the row. API requests only insert rows and
 * call `wake()`, so delivery never blocks them. `stop()` stops claiming and waits for attempts in
 * flight, so a graceful restart neither loses nor repeats a delivery; a crash leaves leases that lapse
 * after `leaseMs`, and the next dispatcher sends those rows (at least once).
 */
export interface DispatcherOptions {
  db: Database;
  clock: Clock;
  log: Logger;
  policy: EgressPolicy;
  ca?: string[];
  /** Opens the endpoints' sealed signing secrets; null when no key is configured. */
  keys?: KeyProvider | null;
  /** Per-attempt timeout (spec: 8 s). */
  timeoutMs: number;
  retrySchedule: readonly number[];
  /** How long a claim is exclusive; must exceed timeoutMs. Default timeoutMs + 30 s. */
  leaseMs?: number;
  /** Polls for due rows this often even without wake() (retries come due; other processes enqueue). */
  pollIntervalMs?: number;
  /** Attempts in flight at once. */
  concurrency?: number;
  random?: () => number;
}

export interface Dispatcher {
  readonly owner: string;
  start(): void;
  stop(): Promise<void>;
  /** Looks for due rows now (called after an enqueue). */
  wake(): void;
  /** Attempts in flight right now. */
  inFlight(): number;
}

function decide(
  claim: ClaimedDelivery,
  result: AttemptResult,
  now: number,
  options: DispatcherOptions,
): { settlement: Settlement; outcome: DeliveryOutcome } {
  if (result.ok) return { settlement: { state: 'delivered' }, outcome: 'delivered' };
  if (claim.endpoint?.retriesEnabled && isRetryable({ statusCode: result.statusCode, failure: result.failure })) {
    const delay = retryDelay(claim.attempt + 1, options.retrySchedule, options.random);
    if (delay !== null) return { settlement: { state: 'pending', nextAttemptAt: now + delay }, outcome: 'retry_scheduled' };
  }
  return { settlement: { state: 'dropped' }, outcome: 'dropped' };
}

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const owner = `dsp_${randomBytes(6).toString('hex')}`;
  const leaseMs = options.leaseMs ?? options.timeoutMs + 30_000;
  const concurrency = options.concurrency ?? 16;
  const inflight = new Set<Promise<void>>();
  let running = false;
  let pumping = false;
  let timer: NodeJS.Timeout | undefined;

  const attempt = async (claim: ClaimedDelivery): Promise<void> => {
    const { db, clock, log } = options;
    // Logged and counted before anything is sent: a kill during the attempt still leaves its row,
    // and the next attempt is numbered after it.
    const deliveryId = transaction(db, () => {
      countAttemptStart(db, claim.outboxId, owner);
      return recordAttemptStart(db, {
        workspaceId: claim.workspaceId,
        eventId: claim.eventId,
        eventType: claim.eventType,
        endpointId: claim.endpointId,
        endpointUrl: claim.endpoint?.url ?? '',
        attempt: claim.attempt,
        createdAt: clock(),
      });
    });
    let result: AttemptResult;
    let secrets: string[] = [];
    let secretsError: string | null = null;
    if (claim.endpoint) {
      try {
        secrets = await openEndpointSecrets(claim.endpoint.storedSecrets, claim.workspaceId, options.keys ?? null);
      } catch (err) {
        secretsError = "the endpoint's signing secrets cannot be decrypted";
        log.error('webhook signing secrets cannot be decrypted', {
          endpointId: claim.endpointId,
          reason: err instanceof Error ? err.message : 'unknown',
        });
      }
    }
    if (!claim.endpoint || secrets.length === 0) {
      result = {
        ok: false,
        statusCode: null,
        durationMs: 0,
        failure: 'invalid_url',
        responseBody: null,
        error: !claim.endpoint ? 'the endpoint was removed' : (secretsError ?? 'the endpoint has no signing secret'),
      };
    } else {
      result = await attemptDelivery({
        url: claim.endpoint.url,
        rawBody: claim.payload,
        secrets,
        nowMs: clock(),
        timeoutMs: options.timeoutMs,
        policy: options.policy,
        ...(options.ca ? { ca: options.ca } : {}),
      });
    }
    const now = clock();
    const { settlement, outcome } = decide(claim, result, now, options);
    transaction(db, () => {
      settleDelivery(db, deliveryId, {
        statusCode: result.statusCode,
        durationMs: result.durationMs,
        error: result.error,
        responseBody: result.responseBody,
        outcome,
      });
      if (!settle(db, claim.outboxId, owner, settlement, now))
        log.warn('webhook lease lost before settling', { eventId: claim.eventId, outboxId: claim.outboxId });
    });
    const fields = {
      eventId: claim.eventId,
      type: claim.eventType,
      endpointId: claim.endpointId,
      attempt: claim.attempt,
      status: result.statusCode,
      durationMs: result.durationMs,
      outcome,
    };
    if (result.ok) log.info('webhook delivered', fields);
    else log.warn('webhook attempt failed', { ...fields, error: result.error });
  };

  const pump = (): void => {
    if (!running || pumping) return;
    pumping = true;
    try {
      while (running && inflight.size < concurrency) {
        const claimed = claimDue(options.db, owner, options.clock(), leaseMs, concurrency - inflight.size);
        if (claimed.length === 0) break;
        for (const claim of claimed) {
          const p: Promise<void> = attempt(claim)
            .catch((err: unknown) => options.log.error('webhook attempt crashed', { eventId: claim.eventId, err }))
            .finally(() => {
              inflight.delete(p);
              pump();
            });
          inflight.add(p);
        }
      }
    } catch (err) {
      options.log.error('webhook dispatcher could not claim rows', { err });
    } finally {
      pumping = false;
    }
  };

  return {
    owner,
    start() {
      if (running) return;
      running = true;
      timer = setInterval(pump, options.pollIntervalMs ?? 1_000);
      timer.unref();
      pump();
    },
    async stop() {
      running = false;
      if (timer) clearInterval(timer);
      await Promise.allSettled([...inflight]);
    },
    wake() {
      if (running) setImmediate(pump);
    },
    inFlight: () => inflight.size,
  };
}
