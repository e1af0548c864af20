import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificateAuthority, type CertificateAuthority } from '../../test/harness/pki.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/fakes/openai-compatible.ts';
import { tonePcm } from '../../test/fakes/audio.ts';
import { ProviderError } from './errors.ts';
import { OpenAIRealtimeSpeechToText } from './realtime-stt.ts';

/**
 * An https STT_BASE_URL becomes a wss:// stream, verified like every other outbound TLS call: a
 * private CA works when the process trusts it (NODE_EXTRA_CA_CERTS, as in a pod, or the `ca`
 * option), and an unknown CA is refused (then the turn falls back, reason stt_stream_unavailable).
 */
const KEY = 'sk-tls-contract-key';
let ca: CertificateAuthority;
let fake: FakeOpenAI;

beforeAll(async () => {
  ca = createCertificateAuthority();
  const cert = ca.issueServer('fake-openai', ['127.0.0.1', 'localhost']);
  fake = await startFakeOpenAI({ apiKey: KEY, voice: 'tone', tls: { cert: cert.certPem, key: cert.keyPem } });
});
afterAll(() => fake.close());

const client = (ca?: string) =>
  new OpenAIRealtimeSpeechToText({
    baseURL: fake.url,
    apiKey: KEY,
    model: 'm-rt',
    provider: 'fake',
    policy: { timeoutMs: 3000, retries: 0 },
    ...(ca ? { ca } : {}),
  });

describe('realtime speech-to-text over TLS', () => {
  it('streams over wss:// with a CA given to the client', async () => {
    expect(fake.url).toMatch(/^https:\/\//);
    const stream = await client(ca.certPem).openStream({ sampleRate: 16_000 });
    fake.scriptTranscripts('over tls');
    stream.append(tonePcm(300, 16_000));
    expect(await stream.commit()).toBe('over tls');
    stream.close();
  });

  it('refuses a server whose CA the process does not trust', async () => {
    const err = await client()
      .openStream({ sampleRate: 16_000 })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ reason: 'stt_stream_unavailable', permanent: false });
    expect((err as Error).message).toMatch(/CERT|SIGNATURE|certificate/i);
  });

  it('trusts NODE_EXTRA_CA_CERTS, as the worker does in a pod (scripts/check-realtime-stt.ts, realtime and batch)', async () => {
    fake.scriptTranscripts('streamed with the extra CA', 'uploaded with the extra CA');
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_EXTRA_CA_CERTS: ca.certFile,
      STT_BASE_URL: fake.url,
      OPENAI_API_KEY: KEY,
      STT_MODEL: 'm-batch',
      STT_REALTIME_MODEL: 'm-rt',
      LOG_LEVEL: 'warn',
    };
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', 'scripts/check-realtime-stt.ts'], { env, timeout: 60_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
    expect(stderr).not.toContain(KEY);
    expect(code, stdout + stderr).toBe(0);
    const lines = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([
      expect.objectContaining({ path: 'realtime', model: 'm-rt', text: 'streamed with the extra CA', audioSeconds: 1.5 }),
      expect.objectContaining({ path: 'batch', model: 'm-batch', text: 'uploaded with the extra CA' }),
    ]);
    expect(fake.requests.filter((r) => r.endpoint === 'stt-stream').at(-1)!.audioSeconds).toBeCloseTo(1.5, 2);
  });
});
