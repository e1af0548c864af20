import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceClient, type Session } from '../../sdk/server/index.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-compatible.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../fakes/otlp-receiver.ts';
import { createCertificateAuthority, type CertificateAuthority } from './pki.ts';
import {
  apiStubEnv,
  DEMO_KEYS,
  demoSeed,
  INTERVIEW_ID,
  realProviders,
  workerEnv,
  type ProviderSetting,
  type SelfHostedSpeech,
} from './system-env.ts';
import { startLiveKitServer, type LiveKitServer } from './livekit-server.ts';
import { freePort, waitFor } from './ports.ts';
import { startServiceProcess, type ServiceProcess } from './processes.ts';
import { startRedis, type RedisServer } from './redis.ts';
import { verifiedInbox, type VerifiedWebhook } from './verified-webhooks.ts';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.ts';

/**
 * The whole system on this machine, for the demo, the end-to-end test and the benchmark:
 * a Redis, the api-stub (SQLite, a seed) as its own process, two workers as their own processes
 * (one is the hosted pipeline, one a customer's self-hosted worker; both behind HTTPS with a
 * throwaway CA), the model providers (real ones when OPENAI_API_KEY is set, else the local
 * OpenAI-compatible stand-in), an OTLP receiver, and a webhook receiver that verifies every event
 * with the server SDK's constructEvent.
 */
export { INTERVIEW, TURN_INTERVIEW, TURN_INTERVIEW_ID } from './system-env.ts';

export type { VerifiedWebhook };

export interface WorkerHandle {
  name: 'hosted' | 'self-hosted';
  url: string;
  /** The management port: /metrics, /healthz, /readyz over plain HTTP. */
  metricsUrl: string;
  token: string;
  process: ServiceProcess;
}

export interface SystemOptions {
  /** Use this Redis (e.g. the test run's shared one) instead of starting one. */
  redisUrl?: string;
  /** `auto`: real providers when their keys are in the environment (system-env.ts realProviders). `fake`: always the local stand-in. */
  providers?: 'auto' | 'fake';
  /** Added latency of the stand-in, per endpoint, to look like a network provider. */
  fakeLatencyMs?: { chat?: number; stt?: number; tts?: number };
  /** Respondent silence that ends a turn. */
  vadSilenceMs?: number;
  /** Where process logs go (one file per process). */
  logDir?: string;
  /** Keep transcripts here (not deleted on stop); default: a temp dir removed on stop. */
  transcriptRoot?: string;
  logLevel?: string;
  /** Where interviews happen: the workers' own WebSocket rooms, or a livekit-server started here. */
  rooms?: 'local' | 'livekit';
  /**
   * The self-hosted speech server (test/harness/speech-server.ts) for both workers' speech-to-text
   * and/or text-to-speech, through their ordinary provider client (STT_BASE_URL, TTS_BASE_URL);
   * the rest stays with the providers above.
   */
  speech?: SelfHostedSpeech;
}

export interface System {
  apiBase: string;
  rooms: 'local' | 'livekit';
  /** The LiveKit server both workers use, with rooms: 'livekit'. */
  livekit: LiveKitServer | null;
  keys: typeof DEMO_KEYS;
  interviewId: string;
  ca: CertificateAuthority;
  /** SHA-256 of the workers' public keys, base64: lets Chromium trust exactly these certificates. */
  workerSpkiHashes: string[];
  providers: { kind: 'fake'; fake: FakeOpenAI } | { kind: 'real' };
  otlp: OtlpReceiver;
  webhooks: {
    receiver: WebhookReceiver;
    verified: VerifiedWebhook[];
    rejected: string[];
    waitFor(type: string, sessionId: string, timeoutMs?: number): Promise<VerifiedWebhook>;
  };
  hosted: WorkerHandle;
  selfHosted: WorkerHandle;
  transcriptDirs: { hosted: string; selfHosted: string };
  server: ServiceClient;
  retrieve(sessionId: string): Promise<Session>;
  /** Settings → Server → Self-host: route this workspace's sessions to the self-hosted worker. */
  setSelfHost(): Promise<void>;
  clearSelfHost(): Promise<void>;
  stop(): Promise<void>;
}

async function ok(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false;
  }
}

/** Waits for readiness, but fails at once (with the process's output) when the process exits first. */
async function untilReadyOrExit(proc: ServiceProcess, ready: () => Promise<void>): Promise<void> {
  const exited = proc.exited.then((code) => {
    throw new Error(`${proc.name} exited with code ${code} before it was ready:\n${proc.output().slice(-2000)}`);
  });
  try {
    await Promise.race([ready(), exited]);
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${proc.output().slice(-2000)}`, { cause: err });
  } finally {
    exited.catch(() => undefined);
  }
}

export async function startSystem(options: SystemOptions = {}): Promise<System> {
  const started: Array<() => Promise<void> | void> = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of started.reverse()) await Promise.resolve(stop()).catch(() => undefined);
  };
  try {
    const dir = mkdtempSync(join(tmpdir(), 'voice-system-'));
    started.push(() => rmSync(dir, { recursive: true, force: true }));
    const logLevel = options.logLevel ?? 'warn';

    let redisUrl = options.redisUrl;
    if (!redisUrl) {
      const redis: RedisServer = await startRedis();
      started.push(() => redis.stop());
      redisUrl = redis.url;
    }

    let livekit: LiveKitServer | null = null;
    if (options.rooms === 'livekit') {
      const server = await startLiveKitServer();
      started.push(() => server.stop());
      livekit = server;
    }

    const ca = createCertificateAuthority('voice-demo-ca');
    started.push(() => rmSync(ca.dir, { recursive: true, force: true }));
    const hostedCert = ca.issueServer('hosted-worker', ['127.0.0.1', 'localhost']);
    const selfHostedCert = ca.issueServer('self-hosted-worker', ['127.0.0.1', 'localhost']);
    const receiverCert = ca.issueServer('webhook-receiver', ['127.0.0.1', 'localhost']);

    const realEnv = options.providers === 'fake' ? null : realProviders(process.env);
    let providers: System['providers'];
    if (realEnv) {
      providers = { kind: 'real' };
    } else {
      const fake = await startFakeOpenAI({ latencyMs: options.fakeLatencyMs ?? {} });
      started.push(() => fake.close());
      providers = { kind: 'fake', fake };
    }
    const otlp = await startOtlpReceiver();
    started.push(() => otlp.close());

    const receiver = await startWebhookReceiver({ tls: receiverCert });
    started.push(() => receiver.close());
    const inbox = verifiedInbox(receiver, DEMO_KEYS.webhookSecret);

    const [apiPort, hostedPort, selfHostedPort] = [await freePort(), await freePort(), await freePort()];
    const metricsPorts = { hosted: await freePort(), 'self-hosted': await freePort() };
    const apiBase = `http://127.0.0.1:${apiPort}`;
    const hostedToken = `hosted-${randomBytes(16).toString('hex')}`;
    const selfHostedToken = `selfhost-${randomBytes(16).toString('hex')}`;
    const transcriptRoot = options.transcriptRoot ?? dir;
    const transcriptDirs = {
      hosted: join(transcriptRoot, 'transcripts-hosted'),
      selfHosted: join(transcriptRoot, 'transcripts-self-hosted'),
    };

    const providerSetting: ProviderSetting =
      providers.kind === 'fake' ? { kind: 'fake', url: providers.fake.url } : { kind: 'real', env: realEnv! };
    const common = {
      redisUrl,
      backendUrl: apiBase,
      providers: providerSetting,
      otlpUrl: otlp.url,
      vadSilenceMs: options.vadSilenceMs ?? 600,
      logLevel,
      base: process.env,
      rooms: livekit?.env,
      ...(options.speech ? { speech: options.speech } : {}),
    };

    const startWorker = async (
      name: 'hosted' | 'self-hosted',
      port: number,
      token: string,
      cert: { certFile: string; keyFile: string },
      transcripts: string,
    ): Promise<WorkerHandle> => {
      const env = workerEnv({
        ...common,
        name,
        port,
        metricsPort: metricsPorts[name],
        token,
        cert,
        transcriptDir: transcripts,
        redisKeyPrefix: `${name}-${randomBytes(4).toString('hex')}`,
      });
      const proc = startServiceProcess(`worker-${name}`, 'worker/main.ts', env, options.logDir);
      started.push(() => proc.stop());
      const url = `https://127.0.0.1:${port}`;
      const metricsUrl = `http://127.0.0.1:${metricsPorts[name]}`;
      // Probes are on the plain-HTTP management port (METRICS_PORT), as the kubelet sees them.
      const ready = (): Promise<boolean> =>
        new Promise((resolve) => {
          const req = httpGet(`${metricsUrl}/readyz`, { timeout: 2000 }, (res) => {
            res.resume();
            resolve(res.statusCode === 200);
          });
          req.on('error', () => resolve(false));
          req.on('timeout', () => req.destroy());
        });
      // Wide: on a machine loaded by builds, a worker's start (tsx, models) has taken over 45 s.
      await untilReadyOrExit(proc, () => waitFor(ready, { timeoutMs: 150_000, what: `the ${name} worker at ${url}` }));
      return { name, url, metricsUrl, token, process: proc };
    };

    const [hosted, selfHosted] = await Promise.all([
      startWorker('hosted', hostedPort, hostedToken, hostedCert, transcriptDirs.hosted),
      startWorker('self-hosted', selfHostedPort, selfHostedToken, selfHostedCert, transcriptDirs.selfHosted),
    ]);

    const seedFile = join(dir, 'seed.json');
    writeFileSync(seedFile, JSON.stringify(demoSeed(receiver.url)));
    const api = startServiceProcess(
      'api-stub',
      'api-stub/main.ts',
      apiStubEnv({
        port: apiPort,
        dbPath: join(dir, 'api-stub.sqlite'),
        seedPath: seedFile,
        hostedPipelineUrl: `${hosted.url}/`,
        hostedPipelineKey: hostedToken,
        caFile: ca.certFile,
        kek: randomBytes(32).toString('base64'),
        logLevel,
        base: process.env,
      }),
      options.logDir,
    );
    started.push(() => api.stop());
    await untilReadyOrExit(api, () => waitFor(() => ok(`${apiBase}/readyz`), { timeoutMs: 120_000, what: `the api-stub at ${apiBase}` }));

    const server = new ServiceClient({
      baseUrl: apiBase,
      secretKey: DEMO_KEYS.secret,
      publishableKey: DEMO_KEYS.publishable,
      maxRetries: 0,
    });
    const selfHostCall = async (method: 'PUT' | 'DELETE'): Promise<void> => {
      const res = await fetch(`${apiBase}/api/v2/workspace/self-host`, {
        method,
        headers: { authorization: `Bearer ${DEMO_KEYS.secret}`, 'content-type': 'application/json' },
        ...(method === 'PUT' ? { body: JSON.stringify({ pipelineEndpoint: `${selfHosted.url}/`, pipelineToken: selfHostedToken }) } : {}),
      });
      if (!res.ok) throw new Error(`${method} self-host answered ${res.status}: ${await res.text()}`);
    };

    return {
      apiBase,
      rooms: livekit ? 'livekit' : 'local',
      livekit,
      keys: DEMO_KEYS,
      interviewId: INTERVIEW_ID,
      ca,
      workerSpkiHashes: [spkiHash(hostedCert.certFile), spkiHash(selfHostedCert.certFile)],
      providers,
      otlp,
      webhooks: { receiver, ...inbox },
      hosted,
      selfHosted,
      transcriptDirs,
      server,
      retrieve: (sessionId) => server.sessions.retrieve(sessionId),
      setSelfHost: () => selfHostCall('PUT'),
      clearSelfHost: () => selfHostCall('DELETE'),
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** base64 SHA-256 of a certificate's SubjectPublicKeyInfo (Chromium's --ignore-certificate-errors-spki-list). */
function spkiHash(certFile: string): string {
  const cert = new X509Certificate(readFileSync(certFile));
  const der = cert.publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('base64');
}
