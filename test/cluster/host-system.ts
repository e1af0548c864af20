import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceClient, type Session } from '../../sdk/server/index.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-compatible.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../fakes/otlp-receiver.ts';
import { createCertificateAuthority, type CertificateAuthority } from '../harness/pki.ts';
import { freePort, waitFor } from '../harness/ports.ts';
import { startServiceProcess } from '../harness/processes.ts';
import { apiStubEnv, DEMO_KEYS, demoSeed, INTERVIEW_ID } from '../harness/system-env.ts';
import type { System, VerifiedWebhook } from '../harness/system.ts';
import { verifiedInbox } from '../harness/verified-webhooks.ts';
import { startWebhookReceiver } from '../harness/webhook-receiver.ts';
import { relayToLoopback, type Relay } from './node-bridge.ts';

/**
 * The service side on the host, for interviews on the cluster's pods: the api-stub (its own process),
 * the model providers' stand-in, an OTLP receiver and a webhook receiver that verifies every event with
 * the server SDK. Pods reach the stand-in, the receiver and the api-stub (outcome reports) through
 * relays on the node's address (node-bridge.ts); the api-stub calls the pool's Service over HTTPS (TLS
 * in the pod, contract C4).
 */
export interface HostSystem {
  /** What runNodeInterview needs of a System. */
  system: System;
  providers: FakeOpenAI;
  otlp: OtlpReceiver;
  /** Addresses pods use. */
  forPods: { providersUrl: string; otlpUrl: string; backendUrl: string };
  ca: CertificateAuthority;
  verified: VerifiedWebhook[];
  rejected: string[];
  waitForWebhook(type: string, sessionId: string, timeoutMs?: number): Promise<VerifiedWebhook>;
  /** Settings → Server → Self-host: the pool's https endpoint with its worker token. */
  setSelfHost(endpoint: string, workerToken: string): Promise<void>;
  stop(): Promise<void>;
}

/** `poolHosts`: the pool's addresses (its Service, its Ingress host), which the api-stub's egress guard must let it call. */
export async function startHostSystem(nodeIp: string, poolHosts: string | string[], logDir?: string): Promise<HostSystem> {
  const stops: Array<() => Promise<void> | void> = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.reverse()) await Promise.resolve(stop()).catch(() => undefined);
  };
  try {
    const dir = mkdtempSync(join(tmpdir(), 'voice-cluster-host-'));
    stops.push(() => rmSync(dir, { recursive: true, force: true }));
    const ca = createCertificateAuthority('voice-cluster-test-ca');
    stops.push(() => rmSync(ca.dir, { recursive: true, force: true }));
    const providers = await startFakeOpenAI({});
    stops.push(() => providers.close());
    const otlp = await startOtlpReceiver();
    stops.push(() => otlp.close());
    const receiver = await startWebhookReceiver({ tls: ca.issueServer('webhook-receiver', ['127.0.0.1']) });
    stops.push(() => receiver.close());

    const apiPort = await freePort();
    const apiBase = `http://127.0.0.1:${apiPort}`;
    const seedFile = join(dir, 'seed.json');
    writeFileSync(seedFile, JSON.stringify(demoSeed(receiver.url)));
    const env = apiStubEnv({
      port: apiPort,
      dbPath: join(dir, 'api-stub.sqlite'),
      seedPath: seedFile,
      // Not used: the workspace routes to its self-host endpoint (the pool).
      hostedPipelineUrl: 'https://127.0.0.1:9/',
      hostedPipelineKey: 'unused-hosted-key',
      caFile: ca.certFile,
      kek: randomBytes(32).toString('base64'),
      logLevel: 'warn',
      base: process.env,
    });
    const api = startServiceProcess(
      'api-stub-cluster',
      'api-stub/main.ts',
      { ...env, EGRESS_ALLOW_HOSTS: [env.EGRESS_ALLOW_HOSTS, ...[poolHosts].flat()].join(',') },
      logDir,
    );
    stops.push(() => api.stop());
    await waitFor(async () => (await fetch(`${apiBase}/readyz`).catch(() => undefined))?.ok === true, {
      timeoutMs: 30_000,
      what: `the api-stub at ${apiBase}\n${api.output().slice(-1500)}`,
    });

    const relays: Relay[] = [];
    for (const port of [new URL(providers.url).port, new URL(otlp.url).port, String(apiPort)])
      relays.push(await relayToLoopback(nodeIp, Number(port)));
    stops.push(() => Promise.all(relays.map((r) => r.close())).then(() => undefined));

    const inbox = verifiedInbox(receiver, DEMO_KEYS.webhookSecret);
    const server = new ServiceClient({
      baseUrl: apiBase,
      secretKey: DEMO_KEYS.secret,
      publishableKey: DEMO_KEYS.publishable,
      maxRetries: 0,
    });
    const system = {
      apiBase,
      keys: DEMO_KEYS,
      interviewId: INTERVIEW_ID,
      ca,
      server,
      retrieve: (id: string): Promise<Session> => server.sessions.retrieve(id),
    } as unknown as System;

    return {
      system,
      providers,
      otlp,
      ca,
      verified: inbox.verified,
      rejected: inbox.rejected,
      forPods: { providersUrl: `${relays[0]!.url}/v1`, otlpUrl: relays[1]!.url, backendUrl: relays[2]!.url },
      waitForWebhook: (type, sessionId, timeoutMs = 30_000) => inbox.waitFor(type, sessionId, timeoutMs),
      async setSelfHost(endpoint, workerToken) {
        const res = await fetch(`${apiBase}/api/v2/workspace/self-host`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${DEMO_KEYS.secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({ pipelineEndpoint: endpoint, pipelineToken: workerToken }),
        });
        if (!res.ok) throw new Error(`PUT self-host answered ${res.status}: ${await res.text()}`);
      },
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
