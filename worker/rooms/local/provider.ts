import { randomBytes } from 'node:crypto';
import type { WebSocket } from 'ws';
import type { JoinTicket } from '../join-ticket.ts';
import type { PreparedRoom, RoomProvider, TokenRequest } from '../provider.ts';
import { signJwt } from '../tokens.ts';

/**
 * Local rooms: served by this worker over WebSocket on its own port (see server.ts and
 * docs/local-room-protocol.md). A room lives in the memory of the pod that prepared it, which is
 * also the pod whose bot slot holds it, so `room_url` points at that pod's PUBLIC_URL.
 */
export interface LocalRoom {
  name: string;
  exp: number;
  sessionId: string | null;
  respondent: WebSocket | null;
  bot: WebSocket | null;
  ended: boolean;
}

export class LocalRoomRegistry {
  private readonly rooms = new Map<string, LocalRoom>();

  add(name: string, exp: number): LocalRoom {
    const room: LocalRoom = { name, exp, sessionId: null, respondent: null, bot: null, ended: false };
    this.rooms.set(name, room);
    return room;
  }

  get(name: string): LocalRoom | undefined {
    return this.rooms.get(name);
  }

  delete(name: string): void {
    this.rooms.delete(name);
  }

  /** Rooms past their `exp`, for the sweeper to close. */
  expired(nowSeconds: number): LocalRoom[] {
    return [...this.rooms.values()].filter((r) => r.exp <= nowSeconds);
  }

  get size(): number {
    return this.rooms.size;
  }
}

export const LOCAL_INPUT_SAMPLE_RATE = 16_000;
export const LOCAL_OUTPUT_SAMPLE_RATE = 24_000;

export interface LocalProviderOptions {
  publicUrl: string;
  secret: string;
  registry: LocalRoomRegistry;
  /** ws(s)://127.0.0.1:<port>: the bot joins over this replica's loopback, not its public address. */
  internalRoomBase?: () => string;
  clock?: () => number;
}

export class LocalRoomProvider implements RoomProvider {
  readonly name = 'local' as const;

  private readonly options: LocalProviderOptions;

  constructor(options: LocalProviderOptions) {
    this.options = options;
  }

  async init(): Promise<void> {}

  async createRoom({ ttlSeconds }: { ttlSeconds: number }): Promise<PreparedRoom> {
    const name = `rm_${randomBytes(12).toString('base64url')}`;
    const exp = Math.floor((this.options.clock ?? Date.now)() / 1000) + ttlSeconds;
    this.options.registry.add(name, exp);
    return { name, url: `${toWebSocketBase(this.options.publicUrl)}/rooms/${name}`, exp };
  }

  mintToken(request: TokenRequest): string {
    return signJwt(
      { room: request.room.name, role: request.role, sid: request.sessionId, iat: request.issuedAt, exp: request.expiresAt },
      this.options.secret,
    );
  }

  botTicket(request: Omit<TokenRequest, 'role'>): JoinTicket {
    const base = this.options.internalRoomBase?.() ?? toWebSocketBase(this.options.publicUrl);
    return {
      transport: this.name,
      url: `${base}/rooms/${request.room.name}`,
      token: this.mintToken({ ...request, role: 'bot' }),
      room: request.room.name,
    };
  }

  async deleteRoom(name: string): Promise<void> {
    this.options.registry.delete(name);
  }
}

/** http://host:port/base -> ws://host:port/base (https -> wss). */
export function toWebSocketBase(httpUrl: string): string {
  return httpUrl.replace(/^http(s?):\/\//, 'ws$1://').replace(/\/+$/, '');
}
