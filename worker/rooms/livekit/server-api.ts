import { mintAdminToken, type LiveKitKeys } from './tokens.ts';

/**
 * The few calls of LiveKit's server API (Twirp over HTTP, JSON bodies) that the provider needs:
 * create, list and delete rooms. The HTTP address is the ws(s):// URL with http(s)://.
 */
export class LiveKitApiError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'LiveKitApiError';
    this.status = status;
    this.code = code;
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

  private async call<T>(method: string, body: Record<string, unknown>): Promise<T> {
    const token = mintAdminToken(this.keys, Math.floor(Date.now() / 1000));
    const res = await fetch(`${this.base}/twirp/livekit.RoomService/${method}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await res.text();
    let json: Record<string, unknown> = {};
    try {
      json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      // A non-JSON answer (a proxy's error page) still gets a status-based error below.
    }
    if (!res.ok) {
      const code = typeof json.code === 'string' ? json.code : `http-${res.status}`;
      const msg = typeof json.msg === 'string' ? json.msg : res.statusText;
      throw new LiveKitApiError(res.status, code, `LiveKit server API ${method} failed: ${res.status} ${code}: ${msg}`);
    }
    return json as T;
  }

  createRoom(room: { name: string; emptyTimeoutSeconds: number; maxParticipants: number }): Promise<LiveKitRoomInfo> {
    return this.call('CreateRoom', { name: room.name, empty_timeout: room.emptyTimeoutSeconds, departure_timeout: 1, max_participants: room.maxParticipants });
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
