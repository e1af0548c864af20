import { startServiceProcess, type ServiceProcess } from './processes.ts';
import { waitFor } from './ports.ts';

/**
 * The speech server (speech/main.ts) as its own process with the real models, the way an operator
 * runs it, on ports the OS picks (read back from its "listening" line). One per test file: each
 * holds the recogniser and the voice (about 0.7-0.9 GB); stop it in afterAll.
 */
export interface SpeechServerHandle {
  /** OpenAI-compatible base URL, e.g. http://127.0.0.1:41234/v1 (what STT_BASE_URL/TTS_BASE_URL take). */
  url: string;
  metricsUrl: string;
  token: string;
  process: ServiceProcess;
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  stop(): Promise<void>;
}

export const SPEECH_TEST_TOKEN = 'speech-test-token-0123456789';

export async function startSpeechServer(env: Record<string, string> = {}, logDir?: string): Promise<SpeechServerHandle> {
  const proc = startServiceProcess(
    'speech',
    'speech/main.ts',
    {
      ...process.env,
      SPEECH_PORT: '0',
      SPEECH_METRICS_PORT: '0',
      SPEECH_HOST: '127.0.0.1',
      SPEECH_TOKEN: SPEECH_TEST_TOKEN,
      LOG_LEVEL: 'info',
      ...env,
    },
    logDir,
  );
  let ports: { port: number; metricsPort: number } | null = null;
  try {
    // Loading both models takes a few seconds alone and much longer on a busy machine.
    await waitFor(
      () => {
        if (proc.proc.exitCode !== null) throw new Error(`the speech server exited (${proc.proc.exitCode}): ${proc.output().slice(-2000)}`);
        const line = proc
          .output()
          .split('\n')
          .find((l) => l.includes('"msg":"listening"'));
        if (line) ports = JSON.parse(line) as { port: number; metricsPort: number };
        return ports !== null;
      },
      { timeoutMs: 180_000, intervalMs: 100, what: 'the speech server to load its models and listen' },
    );
  } catch (err) {
    await proc.stop(2000);
    throw err;
  }
  const { port, metricsPort } = ports!;
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    metricsUrl,
    token: SPEECH_TEST_TOKEN,
    process: proc,
    async metric(name, labels = {}) {
      const text = await (await fetch(metricsUrl)).text();
      const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
      const line = text
        .split('\n')
        .find((l) => l.startsWith(name) && (l[name.length] === ' ' || l[name.length] === '{') && want.every((w) => l.includes(w)));
      return line ? Number(line.split(' ').at(-1)) : 0;
    },
    stop: () => proc.stop(10_000),
  };
}
