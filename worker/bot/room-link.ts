import type { RoomChoice } from '../rooms/registry.ts';
import { openBotRooms } from '../rooms/registry.ts';
import type { BotRooms } from '../rooms/transport.ts';

/**
 * The bot's link to its room transport: opened once when the bot process starts (the prewarm: the
 * transport's client library loads, Daily's bridge process starts), then one join per session with
 * the ticket the worker sent. Which transport is ROOM_PROVIDER's choice, looked up in
 * worker/rooms/registry.ts; the rooms themselves live in worker/rooms/<name>/.
 */
export type { BotRoom } from '../rooms/bot-room.ts';

export function openRoomLink(choice: RoomChoice): Promise<BotRooms> {
  return openBotRooms(choice);
}
