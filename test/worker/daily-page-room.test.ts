import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runDailyRoom, type DailyCallLike } from '../../api-stub/respondent/client/daily-room.ts';
import type { RoomEvents } from '../../api-stub/respondent/client/room.ts';
import { HANGUP_ACK_MAX_MS } from '../../lib/room-control.ts';

/**
 * The respondent page's Daily room speaks the bot's app-message vocabulary (the local rooms' control
 * messages, docs/local-room-protocol.md): state, caption and ended in; hangup out when the respondent
 * leaves. Daily's call object is the unreachable service here, so a stand-in call with the same
 * methods and event shapes drives the page's code.
 */
class StandInCall extends EventEmitter {
  sent: Array<{ data: unknown; to: string | undefined }> = [];
  left = false;
  async join() {
    return {};
  }
  async leave() {
    this.left = true;
  }
  destroyed = false;
  async destroy() {
    this.destroyed = true;
  }
  sendAppMessage(data: unknown, to?: string) {
    this.sent.push({ data, to });
    return this;
  }
}

function recorder() {
  const log: unknown[][] = [];
  const events: RoomEvents = {
    onJoined: () => log.push(['joined']),
    onState: (s) => log.push(['state', s]),
    onCaption: (c) => log.push(['caption', c]),
    onBotAudio: () => log.push(['audio']),
    onInterrupted: () => log.push(['interrupted']),
    onEnded: (r) => log.push(['ended', r]),
    onError: (e) => log.push(['error', e.code]),
  };
  return { log, events };
}

const join = (call: StandInCall, events: RoomEvents) =>
  runDailyRoom(call as unknown as DailyCallLike, {
    roomUrl: 'https://voice-test.daily.co/rm',
    token: 't',
    microphone: {} as MediaStream,
    events,
  });

describe('the respondent page in a Daily room', () => {
  it('shows the bot state and captions from app messages and leaves when the bot ends the interview', async () => {
    const call = new StandInCall();
    const { log, events } = recorder();
    await join(call, events);
    const bot = (data: Record<string, unknown>) => call.emit('app-message', { action: 'app-message', data, fromId: 'bot-id' });
    bot({ type: 'state', state: 'speaking' });
    bot({ type: 'caption', speaker: 'bot', text: 'Hi.', final: true });
    bot({ type: 'audio_end', utteranceId: 'u1' });
    bot({ type: 'state', state: 'listening' });
    bot({ type: 'ended', reason: 'completed' });
    expect(log).toEqual([
      ['joined'],
      ['state', 'speaking'],
      ['caption', { speaker: 'bot', text: 'Hi.', final: true }],
      ['state', 'listening'],
      ['ended', 'completed'],
    ]);
    expect(call.left).toBe(true);
    expect(call.sent).toEqual([]); // the bot ended it: no hang-up goes back
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('tells the bot it hung up (the hangup message) and leaves the room once the bot has answered with ended', async () => {
    const call = new StandInCall();
    const { log, events } = recorder();
    const room = await join(call, events);
    room.leave();
    expect(call.sent).toEqual([{ data: { type: 'hangup' }, to: '*' }]);
    // The app message and the leave travel apart: leaving at once could overtake the hang-up.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(call.left).toBe(false);
    call.emit('app-message', { action: 'app-message', data: { type: 'ended', reason: 'hangup' }, fromId: 'bot-id' });
    await vi.waitFor(() => expect(call.destroyed).toBe(true));
    expect(call.left).toBe(true);
    expect(log).toEqual([['joined']]); // the page shows its own end; the bot's answer is not a second one
    room.leave(); // a second leave (pagehide after the button) sends nothing more
    expect(call.sent).toHaveLength(1);
  });

  it('leaves the room HANGUP_ACK_MAX_MS after the hang-up when the bot never answers', async () => {
    vi.useFakeTimers();
    const call = new StandInCall();
    const { events } = recorder();
    const room = await join(call, events);
    room.leave();
    await vi.advanceTimersByTimeAsync(HANGUP_ACK_MAX_MS - 100);
    expect(call.left).toBe(false);
    await vi.advanceTimersByTimeAsync(200);
    expect(call.left).toBe(true);
    expect(call.destroyed).toBe(true);
  });
});
