import { signJwt } from '../tokens.ts';
import type { ParticipantRole, TokenRequest } from '../provider.ts';

/**
 * LiveKit access tokens, minted locally with node:crypto (HS256, keyed by the API secret) rather
 * than with the server SDK's AccessToken: signing is deterministic (fixed `nbf`/`exp`, no random
 * `jti`), so every replica answers a repeated spawn with the very same token, and the hot path
 * needs no extra dependency. Claims follow LiveKit's token format: `iss` the API key, `sub` the
 * participant identity, `video` the grants.
 */
export interface LiveKitKeys {
  apiKey: string;
  apiSecret: string;
}

/** Identities say the role first, so either side can tell the bot from the respondent. */
export function identityFor(role: ParticipantRole, sessionId: string): string {
  return `${role}:${sessionId}`;
}

export function roleOf(identity: string): ParticipantRole | null {
  if (identity.startsWith('respondent:')) return 'respondent';
  if (identity.startsWith('bot:')) return 'bot';
  return null;
}

export function joinClaims(request: TokenRequest, apiKey: string): Record<string, unknown> {
  return {
    iss: apiKey,
    sub: identityFor(request.role, request.sessionId),
    name: request.role === 'bot' ? 'Interviewer' : 'Respondent',
    nbf: request.issuedAt,
    // Never past the room's own end: the room is ours for that long and no longer.
    exp: Math.min(request.expiresAt, request.room.exp),
    video: {
      room: request.room.name,
      roomJoin: true,
      canPublish: true,
      canSubscribe: true,
      canPublishData: true,
      // Only the microphone: neither side may share a camera or a screen in an interview room.
      canPublishSources: ['microphone'],
    },
  };
}

export function mintJoinToken(request: TokenRequest, keys: LiveKitKeys): string {
  return signJwt(joinClaims(request, keys.apiKey), keys.apiSecret);
}

/** A short-lived token for the server API (create, list and delete rooms). */
export function mintAdminToken(keys: LiveKitKeys, nowSeconds: number, ttlSeconds = 60): string {
  return signJwt(
    {
      iss: keys.apiKey,
      sub: 'voice-worker',
      nbf: nowSeconds - 5,
      exp: nowSeconds + ttlSeconds,
      video: { roomCreate: true, roomList: true, roomAdmin: true },
    },
    keys.apiSecret,
  );
}
