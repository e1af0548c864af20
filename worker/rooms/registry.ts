import { ConfigError, optionalString, type Env } from '../../lib/env.ts';
import { dailyTransport } from './daily/index.ts';
import { joinTicketSchema } from './join-ticket.ts';
import { liveKitTransport } from './livekit/index.ts';
import { localTransport } from './local/index.ts';
import type { BotRooms, RoomTransport, SettingsContext, WorkerRoomDeps, WorkerRooms } from './transport.ts';

/**
 * Every room transport, by the name ROOM_PROVIDER gives it. Adding a transport is one folder under
 * worker/rooms/ (its settings, provider, bot room and index.ts) and one line here; nothing else in
 * the worker or the bot names a transport (docs/worker.md, "Adding a room transport").
 */
export const TRANSPORTS = {
  daily: dailyTransport,
  livekit: liveKitTransport,
  local: localTransport,
} as const;

export type RoomProviderName = keyof typeof TRANSPORTS;
export const ROOM_PROVIDERS = Object.keys(TRANSPORTS) as [RoomProviderName, ...RoomProviderName[]];
export const DEFAULT_ROOM_PROVIDER: RoomProviderName = 'daily';

type SettingsOf<T> = T extends RoomTransport<infer S> ? S : never;

/** The worker config's room part: the transport's name and the settings it read, paired. */
export type RoomChoice = { [K in RoomProviderName]: { roomProvider: K; rooms: SettingsOf<(typeof TRANSPORTS)[K]> } }[RoomProviderName];

/** The bot's join ticket as it crosses into the bot process: checked, and for a known transport. */
export const JoinTicketSchema = joinTicketSchema(ROOM_PROVIDERS);

export function isRoomProviderName(name: string): name is RoomProviderName {
  return Object.hasOwn(TRANSPORTS, name);
}

/** ROOM_PROVIDER, then the variables of the transport it names (a ConfigError names the culprit). */
export function readRoomChoice(env: Env, context: SettingsContext): RoomChoice {
  const name = optionalString(env, 'ROOM_PROVIDER') ?? DEFAULT_ROOM_PROVIDER;
  if (!isRoomProviderName(name)) {
    throw new ConfigError('ROOM_PROVIDER', `must be one of ${ROOM_PROVIDERS.map((p) => `"${p}"`).join(', ')}, got "${name}"`);
  }
  return { roomProvider: name, rooms: TRANSPORTS[name].readSettings(env, context) } as RoomChoice;
}

/**
 * The chosen transport with its settings bound. The one place that looks a transport up by name:
 * the pairing of name and settings is checked by RoomChoice's type, so the lookup needs no switch.
 */
function bound(choice: RoomChoice): { transport: RoomTransport<unknown>; settings: unknown } {
  return { transport: TRANSPORTS[choice.roomProvider] as RoomTransport<unknown>, settings: choice.rooms };
}

export function roomTtlSeconds(choice: RoomChoice, minRoomSeconds: number): number {
  const { transport, settings } = bound(choice);
  return transport.roomTtlSeconds(settings, minRoomSeconds);
}

/** The worker's side: its RoomProvider, and the WebSocket rooms it serves itself if any. */
export function openWorkerRooms(choice: RoomChoice, deps: WorkerRoomDeps): Promise<WorkerRooms> {
  const { transport, settings } = bound(choice);
  return transport.openWorkerSide(settings, deps);
}

/** The bot process's side, opened once when the bot starts (its prewarm). */
export function openBotRooms(choice: RoomChoice): Promise<BotRooms> {
  const { transport, settings } = bound(choice);
  return transport.openBotSide(settings);
}
