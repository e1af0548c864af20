import { randomBytes } from 'node:crypto';
import type { JoinTicket } from '../join-ticket.ts';
import type { PreparedRoom, RoomProvider, TokenRequest } from '../provider.ts';
import { LiveKitServerApi } from './server-api.ts';
import { mintJoinToken, type LiveKitKeys } from './tokens.ts';

/**
 * Rooms on a LiveKit server (ROOM_PROVIDER=livekit; see docs/worker.md).
 *
 * Rooms are created AHEAD through the server API, when a warm slot is prepared, not on first join:
 * that call is off the spawn's hot path anyway (the slot keeps its room), and it lets us set what a
 * join-created room would not have: at most two participants (a leaked link cannot add a listener),
 * an empty timeout as long as the slot keeps the room, and a quick close once everyone has left.
 * If the server lost its rooms (a restart without Redis), the join still works: LiveKit creates a
 * room on first join by default. Join tokens are minted locally (tokens.ts), so spawn makes no
 * round trip to LiveKit.
 */
export interface LiveKitProviderOptions extends LiveKitKeys {
  url: string;
  clock?: () => number;
}

export class LiveKitRoomProvider implements RoomProvider {
  readonly name = 'livekit' as const;
  readonly api: LiveKitServerApi;
  private readonly options: LiveKitProviderOptions;

  constructor(options: LiveKitProviderOptions) {
    this.options = options;
    this.api = new LiveKitServerApi({ url: options.url, keys: options });
  }

  /** Fails early (and clearly) when the server is unreachable or refuses our key. */
  async init(): Promise<void> {
    await this.api.listRooms(['voice-init-probe']);
  }

  async createRoom({ ttlSeconds }: { ttlSeconds: number }): Promise<PreparedRoom> {
    const name = `rm_${randomBytes(12).toString('base64url')}`;
    const exp = Math.floor((this.options.clock ?? Date.now)() / 1000) + ttlSeconds;
    await this.api.createRoom({ name, emptyTimeoutSeconds: ttlSeconds, maxParticipants: 2 });
    // The room name travels in the token (`video.room`); room_url is the server's address.
    return { name, url: this.options.url, exp };
  }

  mintToken(request: TokenRequest): string {
    return mintJoinToken(request, this.options);
  }

  /** The bot joins at the room's own address, LIVEKIT_URL, like the respondent. */
  botTicket(request: Omit<TokenRequest, 'role'>): JoinTicket {
    return { transport: this.name, url: request.room.url, token: this.mintToken({ ...request, role: 'bot' }), room: request.room.name };
  }

  async deleteRoom(name: string): Promise<void> {
    await this.api.deleteRoom(name);
  }
}
