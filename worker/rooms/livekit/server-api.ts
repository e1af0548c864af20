import { callProviderApi, RoomProviderApiError } from '../provider-api.ts';
import { mintAdminToken, type LiveKitKeys } from './tokens.ts';

/**
 * The few calls of LiveKit's server API (Twirp over HTTP, JSON bodies) that the provider needs:
 * create, list and delete rooms. The HTTP address is the ws(s):// URL with http(s)://.
 */
export class LiveKitApiError extends RoomProviderApiError {
  constructor(status: number, code: string, message: string) {
    super(status, code, message);
    this.name = 'LiveKitApiError';
  }
}

export interface LiveKitRoomInfo {
  name: string;
  num_participants?: number;
  empty_timeout?: number;
  max_participants?: number;
}

export class LiveKitServerApi {
  private readonly base: string;
  private readonly keys: LiveKitKeys;
  private readonly timeoutMs: number;

  constructor(options: { url: string; keys: LiveKitKeys; timeoutMs?: number }) {
    this.base = options.url.replace(/^ws(s?):\/\//, 'http$1://').replace(/\/+$/, '');
    this.keys = options.keys;
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  private call<T>(method: string, body: Record<string, unknown>): Promise<T> {
    return callProviderApi<T>({
      method: 'POST',
      url: `${this.base}/twirp/livekit.RoomService/${method}`,
      bearer: mintAdminToken(this.keys, Math.floor(Date.now() / 1000)),
      body,
      timeoutMs: this.timeoutMs,
      describe: `LiveKit server API ${method}`,
      readError: (json) => ({ code: json.code, detail: json.msg }),
      makeError: (status, code, message) => new LiveKitApiError(status, code, message),
    });
  }

  createRoom(room: { name: string; emptyTimeoutSeconds: number; maxParticipants: number }): Promise<LiveKitRoomInfo> {
    return this.call('CreateRoom', {
      name: room.name,
      empty_timeout: room.emptyTimeoutSeconds,
      departure_timeout: 1,
      max_participants: room.maxParticipants,
    });
  }

  async listRooms(names?: string[]): Promise<LiveKitRoomInfo[]> {
    const answer = await this.call<{ rooms?: LiveKitRoomInfo[] }>('ListRooms', names ? { names } : {});
    return answer.rooms ?? [];
  }

  /** A room that is already gone is not an error. */
  async deleteRoom(name: string): Promise<void> {
    try {
      await this.call('DeleteRoom', { room: name });
    } catch (err) {
      if (err instanceof LiveKitApiError && (err.status === 404 || err.code === 'not_found')) return;
      throw err;
    }
  }
}
