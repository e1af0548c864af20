import { z } from 'zod';

/**
 * What the worker hands its bot so that the bot can join a claimed room: the transport, the address
 * the bot connects to, and the bot's own join token, apart (never folded into a URL that the bot
 * would have to take apart again). Minted by the transport's RoomProvider.botTicket(), checked with
 * zod when it crosses into the bot process (worker/bot/messages.ts), joined by the transport's bot
 * side (registry.ts, `openBotRooms`).
 */
export interface JoinTicket {
  /** The transport, as ROOM_PROVIDER spells it. */
  transport: string;
  /** Where the bot connects: a local room's loopback address, LIVEKIT_URL, the Daily room URL. */
  url: string;
  /** The bot's join token for this room (a secret: never logged). */
  token: string;
  /** The room's name at its provider. */
  room: string;
}

/** The ticket's schema for the given transport names (the registry passes its own list). */
export function joinTicketSchema<const T extends readonly [string, ...string[]]>(transports: T) {
  return z.object({
    transport: z.enum(transports),
    url: z.url({ protocol: /^(wss?|https?)$/ }).max(2048),
    token: z.string().min(1).max(8192),
    room: z.string().min(1).max(256),
  });
}
