import { connect, type Socket } from 'node:net';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../harness/ports.ts';
import { startSpeechServer, type SpeechServerHandle } from '../harness/speech-server.ts';

/**
 * Issue 41: the speech server took sockets until its 20,000 file descriptors were gone (its /healthz
 * failed, so a liveness probe would restart it). Now both ports are capped (lib/listen-limits.ts):
 * idle sockets are evicted for new connections, a realtime WebSocket never is. The real process,
 * with caps of 20 and 10 and a request timeout long enough that only the cap can close anything.
 */
const CAP = 20;
let server: SpeechServerHandle;
const sockets: Socket[] = [];

beforeAll(async () => {
  server = await startSpeechServer({
    SPEECH_MAX_CONNECTIONS: String(CAP),
    SPEECH_METRICS_MAX_CONNECTIONS: '10',
    SPEECH_REQUEST_TIMEOUT_SECONDS: '120',
  });
}, 300_000);

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await server?.stop();
});

/** A TCP connection that sends nothing; `reads: false` never reads either. */
function idleConnection(port: number, reads: boolean): Promise<{ closed: () => boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    sockets.push(socket);
    let isClosed = false;
    socket.on('error', () => undefined);
    if (reads) socket.resume();
    else socket.pause();
    socket.on('close', () => void (isClosed = true));
    socket.once('connect', () => resolve({ closed: () => isClosed }));
    socket.once('close', () => resolve({ closed: () => true }));
  });
}

describe("the speech server's listeners under idle sockets", () => {
  it('holds at most SPEECH_MAX_CONNECTIONS idle sockets, keeps a realtime session, and still takes a request', async () => {
    const port = Number(new URL(server.url).port);
    const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/realtime?intent=transcription`, {
      headers: { authorization: `Bearer ${server.token}` },
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const idle = await Promise.all(Array.from({ length: 60 }, () => idleConnection(port, true)));
    await waitFor(() => idle.filter((s) => !s.closed()).length <= CAP - 1, {
      timeoutMs: 10_000,
      what: `at most ${CAP - 1} idle sockets beside the session`,
    });
    expect(ws.readyState).toBe(WebSocket.OPEN);
    // A request gets in: it evicts an idle socket (without the token: a 401 in the OpenAI shape is an answer).
    const res = await fetch(`${server.url}/audio/speech`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(ws.readyState).toBe(WebSocket.OPEN);
    ws.close();
    expect(server.process.output()).toContain('the speech port is at its connection cap (SPEECH_MAX_CONNECTIONS)');
  }, 60_000);

  it('answers /healthz past sockets on the management port that never read', async () => {
    const healthz = server.metricsUrl.replace('/metrics', '/healthz');
    await Promise.all(Array.from({ length: 30 }, () => idleConnection(Number(new URL(healthz).port), false)));
    await waitFor(async () => (await fetch(healthz).catch(() => null))?.status === 200, {
      timeoutMs: 15_000,
      what: '/healthz to answer past 30 silent sockets',
    });
  }, 60_000);
});
