import type { Env } from '../../lib/env.ts';
import type { Logger } from '../../lib/log.ts';
import type { BotRoom } from './bot-room.ts';
import type { JoinTicket } from './join-ticket.ts';
import type { RoomProvider, RoomServer } from './provider.ts';

/**
 * The shape of one room transport (worker/rooms/<name>/index.ts), listed once in registry.ts.
 * A transport reads its own variables, gives the worker its RoomProvider (rooms made ahead, tokens,
 * the bot's join ticket, deletion) and gives the bot process its way into a room. Both sides load
 * their modules on demand, so reading the configuration stays cheap and the worker never loads a
 * bot-only library (LiveKit's native WebRTC client).
 */
export interface SettingsContext {
  /** WORKER_TOKEN: local rooms derive their token secret from it unless ROOM_TOKEN_SECRET is set. */
  workerToken: string;
}

export interface WorkerRoomDeps {
  log: Logger;
  /** PUBLIC_URL: local rooms are served (and named in `room_url`) at this replica's address. */
  publicUrl: string;
  /** ws(s)://127.0.0.1:<port>, where this replica's bots reach the rooms it serves; read per session. */
  internalRoomBase: () => string;
}

export interface WorkerRooms {
  provider: RoomProvider;
  /** WebSocket upgrades of rooms this worker serves itself; null for hosted rooms. */
  server: RoomServer | null;
  /** Ends what the worker side holds: rooms it serves, a queue of deletions. */
  close(): void;
}

export interface JoinedRoom {
  room: BotRoom;
  /** How long the connect took (the `room.connect` span's attribute). */
  connectMs: number;
}

export interface BotRooms {
  /** Settles when the bot may take a session (Daily: its prewarmed bridge is up); rejects when it never can. */
  readonly ready: Promise<void>;
  /** What did not start when `ready` rejects, for the bot's log line (e.g. `its Daily bridge did not start`). */
  readonly notReady: string;
  /** Joins the ticket's room within this transport's own deadline. */
  join(ticket: JoinTicket): Promise<JoinedRoom>;
  /** The bot process is exiting: end anything started ahead (a prewarmed bridge). */
  close(): void;
}

export interface RoomTransport<Settings> {
  readonly name: string;
  /** Reads this transport's variables; a missing or malformed one throws a ConfigError naming it. */
  readSettings(env: Env, context: SettingsContext): Settings;
  /** How long rooms made ahead live, given the least a claimed room needs (join timeout + session). */
  roomTtlSeconds(settings: Settings, minRoomSeconds: number): number;
  openWorkerSide(settings: Settings, deps: WorkerRoomDeps): Promise<WorkerRooms>;
  /** Runs in each bot process at its start (the prewarm), once. */
  openBotSide(settings: Settings): Promise<BotRooms>;
}

/** A ticket meant for another transport is a bug of ours: say which, never the token. */
export function checkTicket(ticket: JoinTicket, transport: string): void {
  if (ticket.transport !== transport)
    throw new Error(`the join ticket is for ${ticket.transport} rooms, but this bot runs ROOM_PROVIDER=${transport}`);
}

/** Runs `join` and measures it, for transports whose connect is the whole join. */
export async function timedJoin(join: () => Promise<BotRoom>): Promise<JoinedRoom> {
  const started = performance.now();
  const room = await join();
  return { room, connectMs: performance.now() - started };
}
