import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/fakes/openai-compatible.ts';
import { tonePcm } from '../../test/fakes/audio.ts';
import { createProviders, type Providers } from './index.ts';

/**
 * Provider connections kept open and warmed (issue 21), over real sockets: a local HTTP server
 * that counts the TCP connections it accepts and, like the big providers, sends no `Keep-Alive`
 * hint (so Node's fetch closes an idle connection after its default 4 s).
 */
interface CountingServer {
  url: string;
  connections: () => number;
  requests: string[];
  close(): Promise<void>;
}

async function countingServer(): Promise<CountingServer> {
  let connections = 0;
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(404).end();
      const answer = {
        id: 'c1',
        object: 'chat.completion',
        created: 0,
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: 'NEXT' }, finish_reason: 'stop' }],
      };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  server.keepAliveTimeout = 0; // no server-side idle timeout, and no Keep-Alive hint
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    connections: () => connections,
    requests,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

function providersFor(url: string, keepAliveMs: number, warm = true): Providers {
  const endpoint = { baseURL: url, apiKey: 'sk-test' };
  return createProviders({
    llm: { ...endpoint, model: 'm-llm' },
    stt: { ...endpoint, model: 'm-stt' },
    tts: { ...endpoint, model: 'm-tts', voice: 'alloy' },
    providerTimeoutMs: 5000,
    providerRetries: 0,
    providerKeepAliveMs: keepAliveMs,
    providerWarm: warm,
  });
}

const ask = (p: Providers) => p.llm.complete([{ role: 'user', content: 'hi' }], { maxTokens: 5 });
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

let server: CountingServer;
afterEach(() => server?.close());

describe('provider connections', () => {
  it("reuses one connection for calls 4.5 s apart (Node's fetch alone opens a second)", async () => {
    server = await countingServer();
    const providers = providersFor(server.url, 60_000);
    expect(await ask(providers)).toBe('NEXT');
    await pause(4500); // an answer longer than Node's 4 s idle limit: the point of the test
    expect(await ask(providers)).toBe('NEXT');
    expect(server.connections()).toBe(1);
  }, 20_000);

  it("closes an idle connection after PROVIDER_KEEPALIVE_MS, and with 0 uses Node's fetch", async () => {
    server = await countingServer();
    const short = providersFor(server.url, 200);
    await ask(short);
    await pause(600);
    await ask(short);
    expect(server.connections()).toBe(2);
    const plain = providersFor(server.url, 0);
    expect(plain.warm).toBeDefined();
    await plain.warm!(); // nothing to warm without kept connections
    expect(server.requests.filter((r) => r.startsWith('GET'))).toEqual([]);
  });

  it('warms: one GET opens the connection the next call uses, and none while one is open', async () => {
    server = await countingServer();
    const providers = providersFor(server.url, 60_000);
    // A second warm while the first connects does nothing more.
    await Promise.all([providers.warm!(), providers.warm!()]);
    expect(server.requests).toEqual(['GET /']);
    expect(server.connections()).toBe(1);
    await ask(providers);
    await providers.warm!(); // a connection is open: nothing to do
    expect(server.requests).toEqual(['GET /', 'POST /v1/chat/completions']);
    expect(server.connections()).toBe(1);
    expect(providersFor(server.url, 60_000, false).warm).toBeUndefined();
  });
});

describe("kept connections speak the providers' API as before", () => {
  let fake: FakeOpenAI;
  let providers: Providers;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ apiKey: 'sk-test', voice: 'tone' });
    providers = providersFor(fake.url, 60_000);
  });
  afterAll(() => fake.close());

  it('streams the model, synthesises speech and uploads a turn for its text', async () => {
    fake.scriptLlm('FOLLOW_UP: Why?');
    const deltas: string[] = [];
    for await (const d of providers.llm.stream([{ role: 'user', content: 'hi' }])) deltas.push(d);
    expect(deltas.join('')).toBe('FOLLOW_UP: Why?');
    let bytes = 0;
    for await (const chunk of providers.tts.synthesize('Hello there.')) bytes += chunk.length;
    expect(bytes).toBeGreaterThan(0);
    fake.scriptTranscripts('I liked it.');
    expect(await providers.stt.transcribe(tonePcm(1000, 16_000, 220, 0.3), { sampleRate: 16_000, language: 'en' })).toBe('I liked it.');
    expect(fake.requests.find((r) => r.endpoint === 'stt')?.audioSeconds).toBeCloseTo(1, 1);
  });
});
