import { isRoomTransportName, type RoomTransportName } from '../../../lib/room-transport.ts';

/** What the page needs from a room, whatever its transport (our local WebSocket rooms, LiveKit or Daily). */
export type BotState = 'speaking' | 'listening' | 'thinking';

export interface Caption {
  speaker: 'bot' | 'respondent';
  text: string;
  final: boolean;
}

export interface RoomError {
  code: string;
  message: string;
  retryable: boolean;
}

export interface RoomEvents {
  onJoined(): void;
  onState(state: BotState): void;
  onCaption(caption: Caption): void;
  /** The first audio of each bot utterance reached the speakers' queue. */
  onBotAudio(): void;
  /** The respondent cut in: the interviewer's audio not yet heard was dropped. */
  onInterrupted(): void;
  onEnded(reason: string): void;
  onError(error: RoomError): void;
}

export interface Room {
  leave(): void;
}

export interface JoinInput {
  roomUrl: string;
  token: string;
  microphone: MediaStream;
  events: RoomEvents;
}

export type RoomKind = RoomTransportName;

/**
 * Which client opens the room of a connect answer: the transport the answer names (`transport`,
 * docs/connect.md). A worker from before that field names none; the page then guesses as it did
 * before: https:// is Daily; ws(s):// is either a worker's local room or a LiveKit server, told apart
 * by the token (LiveKit's carries `video` grants). Null when neither tells.
 */
export function roomKind(answer: { room_url: string; token: string; transport?: unknown }): RoomKind | null {
  return isRoomTransportName(answer.transport) ? answer.transport : guessRoomKind(answer.room_url, answer.token);
}

/** The transport told from the room's address and token alone (answers of older workers). */
export function guessRoomKind(roomUrl: string, token: string): RoomKind | null {
  let scheme: string;
  try {
    scheme = new URL(roomUrl).protocol;
  } catch {
    return null;
  }
  if (scheme === 'https:') return 'daily';
  if (scheme !== 'ws:' && scheme !== 'wss:') return null;
  try {
    const payload = token.split('.')[1] ?? '';
    const claims = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as Record<string, unknown>;
    return claims.video && typeof claims.video === 'object' ? 'livekit' : 'local';
  } catch {
    return 'local';
  }
}
