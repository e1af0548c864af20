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

export type RoomKind = 'local' | 'livekit' | 'daily';

/**
 * Which client opens the room the connect answer names: https:// is Daily; ws(s):// is either a
 * worker's local room or a LiveKit server, told apart by the token (LiveKit's carries `video`
 * grants), so no extra field is needed in the connect answer. Null for anything else.
 */
export function roomKind(roomUrl: string, token: string): RoomKind | null {
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
