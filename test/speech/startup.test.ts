import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServiceProcess } from '../harness/processes.ts';

/**
 * The speech server process refuses to start, with one line saying what to do and exit code 1,
 * without its models, without espeak-ng data, and without a bearer token; it never opens a port
 * it cannot serve.
 */
async function run(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const proc = startServiceProcess('speech-startup', 'speech/main.ts', {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    SPEECH_PORT: '0',
    SPEECH_METRICS_PORT: '0',
    ...env,
  });
  const code = await proc.exited;
  return { code, output: proc.output() };
}

describe('speech server start-up', () => {
  it('without the model files: exit 1, naming the script that fetches them', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'no-models-'));
    const { code, output } = await run({ SPEECH_TOKEN: 'a-token-that-is-long-enough', SPEECH_MODELS_DIR: empty });
    expect(code).toBe(1);
    expect(output).toContain('the speech models are missing');
    expect(output).toContain('bash scripts/speech-models.sh');
    expect(output).not.toContain('listening');
  }, 60_000);

  it('without espeak-ng data, or without a token: exit 1 with the variable to set', async () => {
    const noEspeak = await run({
      SPEECH_TOKEN: 'a-token-that-is-long-enough',
      SPEECH_ESPEAK_DATA_DIR: mkdtempSync(join(tmpdir(), 'no-espeak-')),
    });
    expect(noEspeak.code).toBe(1);
    expect(noEspeak.output).toContain('SPEECH_ESPEAK_DATA_DIR');
    const noToken = await run({});
    expect(noToken.code).toBe(1);
    expect(noToken.output).toContain('speech: configuration error: SPEECH_TOKEN: is required');
  }, 60_000);
});
