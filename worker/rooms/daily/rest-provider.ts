import type { Logger } from '../../../lib/log.ts';
import type { JoinTicket } from '../join-ticket.ts';
import type { PreparedRoom, RoomProvider, TokenRequest } from '../provider.ts';
import { callProviderApi, RoomProviderApiError } from '../provider-api.ts';
import { signJwt } from '../tokens.ts';

/**
 * The hosted video-room provider (Daily) over its REST API. Rooms are created ahead with `exp`
 * and `eject_at_room_exp`; meeting tokens are self-signed JWTs keyed with the domain's API key
 * (abbreviated claims `r`, `d`, `iat`, `exp`, `u`, `o`, `ejt`), so minting one is local.
 * Deletion is queued and throttled, and a room that is already gone (404) counts as deleted.
 */
export class DailyApiError extends RoomProviderApiError {
  constructor(status: number, code: string, message: string) {
    super(status, code, message);
    this.name = 'DailyApiError';
  }
}

export interface DailyOptions {
  apiKey: string;
  apiUrl: string;
  domainId: string | null;
  log: Logger;
  /** Deletes per second at most (the provider rate-limits its REST API). */
  deletesPerSecond?: number;
  timeoutMs?: number;
}

interface DailyRoom {
  name: string;
  url: string;
  config?: { exp?: number };
}

export class DailyRoomProvider implements RoomProvider {
  readonly name = 'daily' as const;
  private domainId: string | null;
  private readonly deleteQueue: Array<{ name: string; attempts: number }> = [];
  private readonly timer: NodeJS.Timeout;

  private readonly options: DailyOptions;

  constructor(options: DailyOptions) {
    this.options = options;
    this.domainId = options.domainId;
    this.timer = setInterval(() => void this.deleteNext(), 1000 / (options.deletesPerSecond ?? 2));
    this.timer.unref();
  }

  private request<T>(method: string, path: string, body?: unknown): Promise<T> {
    return callProviderApi<T>({
      method,
      url: `${this.options.apiUrl}${path}`,
      bearer: this.options.apiKey,
      body,
      timeoutMs: this.options.timeoutMs ?? 10_000,
      describe: `video-room API ${method} ${path.split('?')[0]}`,
      readError: (json) => ({ code: json.error, detail: json.info }),
      makeError: (status, code, message) => new DailyApiError(status, code, message),
    });
  }

  async init(): Promise<void> {
    if (this.domainId) return;
    // The domain configuration endpoint names the domain id that self-signed tokens must carry.
    const domain = await this.request<{ domain_id?: string }>('GET', '/');
    if (!domain.domain_id) throw new Error('video-room API did not return a domain_id; set DAILY_DOMAIN_ID');
    this.domainId = domain.domain_id;
  }

  async createRoom({ ttlSeconds }: { ttlSeconds: number }): Promise<PreparedRoom> {
    const exp = Math.floor(Date.now() / 1000) + ttlSeconds;
    const room = await this.request<DailyRoom>('POST', '/rooms', {
      privacy: 'private',
      properties: { exp, eject_at_room_exp: true, enable_chat: false, start_video_off: true },
    });
    return { name: room.name, url: room.url, exp: room.config?.exp ?? exp };
  }

  async getRoom(name: string): Promise<DailyRoom | null> {
    try {
      return await this.request<DailyRoom>('GET', `/rooms/${encodeURIComponent(name)}`);
    } catch (err) {
      if (err instanceof DailyApiError && err.status === 404) return null;
      throw err;
    }
  }

  mintToken(request: TokenRequest): string {
    if (!this.domainId) throw new Error('DailyRoomProvider.init() must run before tokens are minted');
    const claims: Record<string, unknown> = {
      r: request.room.name,
      d: this.domainId,
      iat: request.issuedAt,
      exp: Math.min(request.expiresAt, request.room.exp),
      u: request.role === 'bot' ? 'Interviewer' : 'Respondent',
      ud: request.role === 'bot' ? `bot:${request.sessionId}` : request.sessionId,
      o: request.role === 'bot',
      ejt: true,
    };
    return signJwt(claims, this.options.apiKey);
  }

  /** The bot joins the room's own URL through its bridge (bot-room.ts), with an owner token. */
  botTicket(request: Omit<TokenRequest, 'role'>): JoinTicket {
    return { transport: this.name, url: request.room.url, token: this.mintToken({ ...request, role: 'bot' }), room: request.room.name };
  }

  async deleteRoom(name: string): Promise<void> {
    this.deleteQueue.push({ name, attempts: 0 });
  }

  /** Deletes now, tolerating 404; exposed for tests and for the queue. */
  async deleteRoomNow(name: string): Promise<void> {
    try {
      await this.request('DELETE', `/rooms/${encodeURIComponent(name)}`);
    } catch (err) {
      if (err instanceof DailyApiError && err.status === 404) return;
      throw err;
    }
  }

  get pendingDeletes(): number {
    return this.deleteQueue.length;
  }

  private async deleteNext(): Promise<void> {
    const next = this.deleteQueue.shift();
    if (!next) return;
    try {
      await this.deleteRoomNow(next.name);
    } catch (err) {
      if (next.attempts < 3) this.deleteQueue.push({ name: next.name, attempts: next.attempts + 1 });
      else this.options.log.warn('giving up deleting a video room; it expires by itself', { room: next.name, err });
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}
