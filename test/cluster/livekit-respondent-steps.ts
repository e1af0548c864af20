import { DisconnectReason, Room, RoomEvent } from '@livekit/rtc-node';
import { CONTROL_TOPIC, decodeControl } from '../../lib/room-control.ts';
import { runLiveKitRespondent, type LiveKitRespondentResult } from '../harness/livekit-respondent.ts';
import { answerClips, DEFAULT_ANSWERS } from '../harness/node-interview.ts';
import type { System } from '../harness/system.ts';

/**
 * A respondent's steps one at a time, for LiveKit rooms on the cluster: open a session, connect (again,
 * for a retry after a failure), and either watch the interviewer until it leaves or answer a whole
 * interview. runNodeInterview does all of it in one go and cannot stop halfway or connect twice.
 */
export interface Connected {
  roomUrl: string;
  token: string;
  route: string;
}

/** A session created with the publishable key, its page opened (CLICKED). */
export async function openSession(system: System, metadata: Record<string, unknown>): Promise<string> {
  const created = await system.server.sessions.create({ interviewId: system.interviewId, metadata });
  const page = await fetch(created.sessionUrl, { headers: { accept: 'text/html' } });
  if (!page.ok) throw new Error(`the respondent page answered ${page.status}`);
  await page.text();
  return created.sessionId;
}

/** POST /api/v2/sdk/connect, as the page does (and as its Retry button does again). */
export async function connectSession(system: System, sessionId: string): Promise<Connected> {
  const res = await fetch(`${system.apiBase}/api/v2/sdk/connect`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ publishableKey: system.keys.publishable, interviewId: system.interviewId, sessionId, metadata: {} }),
  });
  const answer = (await res.json()) as { room_url?: string; token?: string; route?: string; error?: string; message?: string };
  if (!res.ok || !answer.room_url || !answer.token)
    throw new Error(`connect answered ${res.status}: ${answer.error ?? ''} ${answer.message ?? ''}`);
  return { roomUrl: answer.room_url, token: answer.token, route: String(answer.route) };
}

/** A whole interview in the room, answering each question with espeak-ng speech; `onEvent` gets state and caption lines. */
export function answerInterview(room: Connected, onEvent?: (line: string) => void): Promise<LiveKitRespondentResult> {
  return runLiveKitRespondent({
    url: room.roomUrl,
    token: room.token,
    answers: answerClips(DEFAULT_ANSWERS),
    reactionMs: 300,
    timeoutMs: 150_000,
    onEvent,
  });
}

export interface WatchedRoom {
  /** Resolves at the bot's first caption: the interview is live. */
  botSpoke: Promise<void>;
  /**
   * Resolves when the interviewer is gone without an `ended` message: its participant left the room,
   * or the room itself was deleted (the replica that reaps a lost session deletes its room), so the
   * respondent is told rather than left waiting in silence.
   */
  botLeft: Promise<void>;
  /** How the respondent learnt it: `participant_left`, or `room_deleted`. */
  howLeft(): string | null;
  /** Control messages seen, for failure messages. */
  seen: string[];
  leave(): Promise<void>;
}

/** Joins without a microphone and watches the bot: what a respondent sees when the interviewer vanishes. */
export async function watchBot(room: Connected): Promise<WatchedRoom> {
  const lk = new Room();
  const seen: string[] = [];
  let spoke!: () => void;
  let left!: () => void;
  const botSpoke = new Promise<void>((resolve) => (spoke = resolve));
  const botLeft = new Promise<void>((resolve) => (left = resolve));
  lk.on(RoomEvent.DataReceived, (payload, _participant, _kind, topic) => {
    if (topic !== CONTROL_TOPIC) return;
    const msg = decodeControl(payload);
    if (!msg) return;
    seen.push(`${String(msg.type)} ${String(msg.state ?? msg.text ?? msg.reason ?? '')}`);
    if (msg.type === 'caption' && msg.speaker === 'bot') spoke();
  });
  let how: string | null = null;
  const gone = (why: string) => {
    if (seen.some((s) => s.startsWith('ended'))) return;
    how ??= why;
    left();
  };
  lk.on(RoomEvent.ParticipantDisconnected, (p) => {
    if (p.identity.startsWith('bot:')) gone('participant_left');
  });
  lk.on(RoomEvent.Disconnected, (reason) => {
    if (reason === DisconnectReason.ROOM_DELETED) gone('room_deleted');
  });
  await lk.connect(room.roomUrl, room.token, { autoSubscribe: false, dynacast: false });
  return { botSpoke, botLeft, seen, howLeft: () => how, leave: () => lk.disconnect().catch(() => undefined) };
}
