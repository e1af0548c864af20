import { checkTicket, timedJoin, type RoomTransport } from '../transport.ts';
import { readDailySettings, type DailySettings } from './settings.ts';

/**
 * Daily rooms as a transport: rooms made ahead through the REST API, self-signed meeting tokens, and
 * the bot in the room through one daily-python bridge process per bot (bridge-process.ts), started
 * with the bot so that a session's join never waits for Python and the SDK.
 */
export const dailyTransport: RoomTransport<DailySettings> = {
  name: 'daily',
  readSettings: readDailySettings,
  // DAILY_ROOM_TTL_SECONDS, raised to fit one whole session with some margin.
  roomTtlSeconds: (settings, minRoomSeconds) => Math.max(settings.roomTtlSeconds, minRoomSeconds + 300),
  async openWorkerSide(settings, deps) {
    const { DailyRoomProvider } = await import('./rest-provider.ts');
    const provider = new DailyRoomProvider({
      apiKey: settings.apiKey,
      apiUrl: settings.apiUrl,
      domainId: settings.domainId,
      log: deps.log,
    });
    return { provider, server: null, close: () => provider.close() };
  },
  async openBotSide(settings) {
    const { DailyRoomJoiner } = await import('./bot-room.ts');
    const joiner = new DailyRoomJoiner({ python: settings.bridgePython });
    return {
      // A slot is warm only with its bridge ready (a bridge that cannot start keeps it out of the pool).
      ready: joiner.prewarmed!.ready,
      notReady: 'its Daily bridge did not start',
      join: async (ticket) => {
        checkTicket(ticket, 'daily');
        return timedJoin(() => joiner.join(ticket));
      },
      close: () => joiner.close(),
    };
  },
};
