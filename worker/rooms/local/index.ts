import { checkTicket, timedJoin, type RoomTransport } from '../transport.ts';
import { readLocalSettings, type LocalSettings } from './settings.ts';

/**
 * Local rooms as a transport: the worker serves them over WebSocket on its own port, and its bots
 * join them over the loopback address. For development and single-replica installs (docs/worker.md).
 */
const JOIN_TIMEOUT_MS = 5000;

export const localTransport: RoomTransport<LocalSettings> = {
  name: 'local',
  readSettings: readLocalSettings,
  // The worker's own rooms cost nothing to keep: an hour past the least a session needs.
  roomTtlSeconds: (_settings, minRoomSeconds) => minRoomSeconds + 3600,
  async openWorkerSide(settings, deps) {
    const [{ LocalRoomProvider, LocalRoomRegistry }, { createLocalRoomServer }] = await Promise.all([
      import('./provider.ts'),
      import('./server.ts'),
    ]);
    const registry = new LocalRoomRegistry();
    const provider = new LocalRoomProvider({
      publicUrl: deps.publicUrl,
      secret: settings.tokenSecret,
      registry,
      internalRoomBase: deps.internalRoomBase,
    });
    const server = createLocalRoomServer({ registry, secret: settings.tokenSecret, log: deps.log });
    return { provider, server, close: () => server.closeAll() };
  },
  async openBotSide() {
    const { joinLocalRoom } = await import('./bot-room.ts');
    return {
      ready: Promise.resolve(),
      notReady: 'its local room client did not load',
      join: async (ticket) => {
        checkTicket(ticket, 'local');
        return timedJoin(() => joinLocalRoom(`${ticket.url}?token=${encodeURIComponent(ticket.token)}`, JOIN_TIMEOUT_MS));
      },
      close: () => undefined,
    };
  },
};
