import { checkTicket, type RoomTransport } from '../transport.ts';
import { readLiveKitSettings, type LiveKitSettings } from './settings.ts';

/**
 * LiveKit rooms as a transport: rooms made ahead through the server API, tokens minted locally, the
 * bot on @livekit/rtc-node. Its native WebRTC library loads in the bot process only, at its start.
 */
/** A WebRTC connect (ICE, DTLS) takes longer than a WebSocket upgrade, and more under load. */
const JOIN_TIMEOUT_MS = 15_000;

export const liveKitTransport: RoomTransport<LiveKitSettings> = {
  name: 'livekit',
  readSettings: readLiveKitSettings,
  // The server closes an empty room after this too (empty_timeout), so it costs nothing to keep.
  roomTtlSeconds: (_settings, minRoomSeconds) => minRoomSeconds + 3600,
  async openWorkerSide(settings) {
    const { LiveKitRoomProvider } = await import('./provider.ts');
    return { provider: new LiveKitRoomProvider(settings), server: null, close: () => undefined };
  },
  async openBotSide() {
    const { joinLiveKitRoom } = await import('./bot-room.ts');
    return {
      ready: Promise.resolve(),
      notReady: 'its LiveKit client did not load',
      join: async (ticket) => {
        checkTicket(ticket, 'livekit');
        // The room is named in the token; the URL is the server's own.
        return joinLiveKitRoom(ticket.url, ticket.token, JOIN_TIMEOUT_MS);
      },
      close: () => undefined,
    };
  },
};
