import type { RoomProviderName } from '../config.ts';

/**
 * A video room provider: rooms are prepared ahead (kept with their warm slot in the pool) and join
 * tokens are minted locally, so the spawn's hot path never waits on the provider.
 */
export interface PreparedRoom {
  name: string;
  /** What the respondent joins: https:// for Daily, ws(s):// for local rooms and the LiveKit server. */
  url: string;
  /** Unix seconds when the provider closes the room (and ejects everyone). */
  exp: number;
}

export type ParticipantRole = 'respondent' | 'bot';

export interface TokenRequest {
  room: PreparedRoom;
  role: ParticipantRole;
  sessionId: string;
  /** Unix seconds: fixed at claim time so a repeated spawn mints the same token. */
  issuedAt: number;
  expiresAt: number;
}

export interface RoomProvider {
  readonly name: RoomProviderName;
  /** One-time set-up before the first room (e.g. learn the provider's domain id). */
  init(): Promise<void>;
  createRoom(options: { ttlSeconds: number }): Promise<PreparedRoom>;
  /** Pure and local: no provider round trip. */
  mintToken(request: TokenRequest): string;
  /** Best effort; a room that is already gone is not an error. */
  deleteRoom(name: string): Promise<void>;
  /** True when this worker's own bot can join rooms of this provider today. */
  readonly botCanJoin: boolean;
}
