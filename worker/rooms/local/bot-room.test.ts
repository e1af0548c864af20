import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { joinLocalRoom } from './bot-room.ts';

/**
 * A bot that leaves a local room and then exits must not do so before the relay has read what it
 * sent: an exit with unread audio in the socket resets the connection, and the reset discards the
 * bot's last messages at the relay (seen as a respondent told "failed" after a completed interview).
 */
let server: WebSocketServer | undefined;
afterEach(async () => {
  for (const client of server?.clients ?? []) client.terminate();
  await new Promise((resolve) => server?.close(resolve));
});

describe('the bot side of a local room', () => {
  it('settles whenClosed only after the relay has read the last message and the close', async () => {
    server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await once(server, 'listening');
    const received: string[] = [];
    let relay: WebSocket | undefined;
    server.on('connection', (ws) => {
      relay = ws;
      ws.on('message', (data) => received.push(data.toString()));
    });
    const room = await joinLocalRoom(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/rooms/r1`, 2000);
    // The relay is slow to read: its socket is paused for a while.
    (relay as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
    setTimeout(() => (relay as unknown as { _socket: { resume(): void } })._socket.resume(), 300);
    room.sendControl({ type: 'ended', reason: 'completed' });
    room.close();
    await room.whenClosed();
    expect(received).toEqual([JSON.stringify({ type: 'ended', reason: 'completed' })]);
  });

  it('settles whenClosed at once when the socket is already closed', async () => {
    server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await once(server, 'listening');
    const room = await joinLocalRoom(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/rooms/r2`, 2000);
    room.close();
    await room.whenClosed();
    const started = Date.now();
    await room.whenClosed();
    expect(Date.now() - started).toBeLessThan(1000); // at once: a pending one would never settle (wide: a loaded machine)
  });
});
