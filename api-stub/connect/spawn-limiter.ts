/**
 * Per-workspace cap on spawns in flight (spec: spawn requests are rate-limited per workspace, so one
 * worker cannot degrade spawn latency for others). Each workspace has its own counter: a workspace
 * whose worker hangs fills only its own slots, and its extra callers get 429 at once instead of
 * queueing. Spawns are I/O waits, so other workspaces' spawns proceed unaffected.
 */
export interface SpawnLimiter {
  /** A release function, or null when the workspace is at its cap. */
  tryAcquire(workspaceId: string): (() => void) | null;
  inFlight(workspaceId: string): number;
}

export function createSpawnLimiter(maxInFlightPerWorkspace: number): SpawnLimiter {
  const counts = new Map<string, number>();
  return {
    tryAcquire(workspaceId) {
      const current = counts.get(workspaceId) ?? 0;
      if (current >= maxInFlightPerWorkspace) return null;
      counts.set(workspaceId, current + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (counts.get(workspaceId) ?? 1) - 1;
        if (left <= 0) counts.delete(workspaceId);
        else counts.set(workspaceId, left);
      };
    },
    inFlight: (workspaceId) => counts.get(workspaceId) ?? 0,
  };
}
