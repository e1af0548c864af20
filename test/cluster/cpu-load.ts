import type { KubeCli } from './kube-cli.ts';

/** The file whose appearance ends a pod's busy loop (the worker's /tmp is a writable emptyDir). */
const STOP_FILE = '/tmp/cpu-load-stop';
/** A loop that outlives its test by mistake still ends on its own. */
const MAX_LOAD_MS = 10 * 60_000;

// Busy on one core until the stop file exists (looked for every 50 ms of spinning) or the cap passes.
const BUSY_LOOP = `
const fs = require('node:fs');
const end = Date.now() + ${MAX_LOAD_MS};
let next = 0;
for (;;) {
  const now = Date.now();
  if (now >= next) {
    if (now > end || fs.existsSync('${STOP_FILE}')) break;
    next = now + 50;
  }
}
fs.rmSync('${STOP_FILE}', { force: true });
`;

export interface CpuLoad {
  /** Ends every loop and waits for their exec sessions to return. */
  stop(): Promise<void>;
}

/**
 * CPU load in running worker pods: one busy `node` process per pod, started with `kubectl exec` (the
 * worker image has node and nothing else to spin with). A spinning process wants a whole core, far
 * above any pod's CPU request, so the HPA sees the pods busy whatever else loads the machine.
 */
export function loadPods(k: KubeCli, namespace: string, pods: string[]): CpuLoad {
  const exec = (pod: string, script: string): Promise<string> =>
    k.kubectl(['exec', '-n', namespace, pod, '-c', 'worker', '--', 'node', '-e', script]);
  // Kept as values: a loop that fails early is reported by stop(), not as an unhandled rejection.
  const loops = pods.map((pod) =>
    exec(pod, BUSY_LOOP).then(
      () => undefined,
      (err: unknown) => err,
    ),
  );
  return {
    async stop() {
      await Promise.all(pods.map((pod) => exec(pod, `require('node:fs').writeFileSync('${STOP_FILE}', '')`)));
      const failed = (await Promise.all(loops)).filter((err) => err !== undefined);
      if (failed.length > 0) throw new Error(`a CPU load loop failed: ${failed.map(String).join('; ')}`);
    },
  };
}
