/**
 * A shutdown with a deadline: stopping releases the lease and waits for in-flight reconciles, and
 * an API server that does not answer must not keep the process alive until the kubelet's SIGKILL
 * (the standby then waits out the whole lease anyway). Past the deadline the process exits.
 */
import type { Logger } from '../lib/log.ts';

/** 'stopped' when `stop` finished within `timeoutMs`, 'timed-out' otherwise (it keeps running). */
export async function stopWithin(stop: () => Promise<void>, timeoutMs: number, log: Logger): Promise<'stopped' | 'timed-out'> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timed-out'>((resolve) => (timer = setTimeout(() => resolve('timed-out'), timeoutMs)));
  const stopped = stop().then(
    () => 'stopped' as const,
    (err: unknown) => {
      log.error('shutdown failed', { error: err });
      return 'stopped' as const;
    },
  );
  const result = await Promise.race([stopped, deadline]);
  clearTimeout(timer);
  if (result === 'timed-out') log.warn('shutdown did not finish in time; exiting anyway', { timeoutMs });
  return result;
}
