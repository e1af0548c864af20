/**
 * A reconcile that threw or overran its deadline marks its own pool: `Degraded` with the reason
 * and a Warning Event, the other conditions left as they were. The process and every other pool
 * carry on; the runtime retries the pool with backoff.
 */
import { ConditionType, Reason, type ConditionInput } from './conditions.ts';
import type { ReconcileDeps } from './reconcile-deps.ts';
import type { Failure } from './runtime/controller.ts';
import { warn, writeStatus } from './status.ts';

/** Long enough for a cause, short enough that no message grows a status past what etcd holds. */
const MAX_MESSAGE = 1024;

export async function markFailed(deps: ReconcileDeps, key: string, failure: Failure): Promise<void> {
  const [namespace, name] = key.split('/') as [string, string];
  const pool = deps.cache?.pool(namespace, name);
  if (!pool || pool.metadata.deletionTimestamp) return;
  const reason = failure.kind === 'timeout' ? Reason.ReconcileTimedOut : Reason.ReconcileFailed;
  const what = failure.kind === 'timeout' ? 'the reconcile was cut off' : 'the reconcile failed';
  const message = `VoiceWorkerPool ${name}: ${what} (retrying with backoff): ${failure.error.message}`.slice(0, MAX_MESSAGE);
  const kept: ConditionInput[] = (pool.status?.conditions ?? [])
    .filter((c) => c.type !== ConditionType.Degraded)
    .map(({ type, status, reason: r, message: m }) => ({ type, status, reason: r, message: m }));
  const { conditions: _conditions, observedGeneration: _observed, ...fields } = pool.status ?? {};
  await writeStatus(deps, pool, [...kept, { type: ConditionType.Degraded, status: 'True', reason, message }], fields);
  await warn(deps, pool, reason, message);
}
