/**
 * The room transports a connect answer may name (`transport`, docs/connect.md): which client the
 * respondent's page opens the room with. The worker names its ROOM_PROVIDER in the spawn answer; the
 * api-stub passes it on. A worker from before this field names none: the page then tells the
 * transport from the room's address and token (api-stub/respondent/client/room.ts, `guessRoomKind`).
 */
export const ROOM_TRANSPORTS = ['livekit', 'daily', 'local'] as const;

export type RoomTransportName = (typeof ROOM_TRANSPORTS)[number];

export function isRoomTransportName(value: unknown): value is RoomTransportName {
  return typeof value === 'string' && (ROOM_TRANSPORTS as readonly string[]).includes(value);
}
