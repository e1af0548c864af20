/** What the page needs from a room, whatever its transport (our local WebSocket rooms or Daily). */
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
