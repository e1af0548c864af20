import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { JoinTicket } from './join-ticket.ts';

/**
 * A video room provider, the worker's side of a room transport: rooms are prepared ahead (kept with
 * their warm slot in the pool) and join tokens are minted locally, so the spawn's hot path never
 * waits on the provider. Each transport under worker/rooms/<name>/ has one (see registry.ts).
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
  /** The transport's name, as ROOM_PROVIDER spells it. */
  readonly name: string;
  /** One-time set-up before the first room (e.g. learn the provider's domain id). */
  init(): Promise<void>;
  createRoom(options: { ttlSeconds: number }): Promise<PreparedRoom>;
  /** Pure and local: no provider round trip. */
  mintToken(request: TokenRequest): string;
  /**
   * The bot's join ticket for a claimed room: where this worker's bot joins it, with the bot's own
   * token. Pure and local, like mintToken.
   */
  botTicket(request: Omit<TokenRequest, 'role'>): JoinTicket;
  /** Best effort; a room that is already gone is not an error. */
  deleteRoom(name: string): Promise<void>;
}

/** WebSocket upgrades of rooms that the worker serves on its own port (local rooms). */
export interface RoomServer {
  /** Returns false when the request is not for /rooms/, so the caller can refuse it. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  closeAll(): void;
}
