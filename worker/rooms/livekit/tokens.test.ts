import { describe, expect, it } from 'vitest';
import { verifyJwt } from '../tokens.ts';
import { identityFor, joinClaims, mintAdminToken, mintJoinToken, roleOf } from './tokens.ts';

const keys = { apiKey: 'APIkey', apiSecret: 'a-livekit-secret-of-32-characters-or-more' };
const room = { name: 'rm_abc', url: 'ws://127.0.0.1:7880', exp: 2_000_000_000 };

describe('LiveKit join tokens', () => {
  it('carry LiveKit claims: iss the key, sub the identity, nbf/exp, the room and microphone-only grants', () => {
    const request = { room, role: 'respondent' as const, sessionId: 'inv_1', issuedAt: 1_800_000_000, expiresAt: 1_800_003_600 };
    expect(joinClaims(request, keys.apiKey)).toEqual({
      iss: 'APIkey',
      sub: 'respondent:inv_1',
      name: 'Respondent',
      nbf: 1_800_000_000,
      exp: 1_800_003_600,
      video: {
        room: 'rm_abc',
        roomJoin: true,
        canPublish: true,
        canSubscribe: true,
        canPublishData: true,
        canPublishSources: ['microphone'],
      },
    });
    const token = mintJoinToken(request, keys);
    const checked = verifyJwt(token, keys.apiSecret, 1_800_000_100);
    expect(checked.ok).toBe(true);
    expect(mintJoinToken(request, keys)).toBe(token);
  });

  it('never outlive the room', () => {
    const claims = joinClaims({ room, role: 'bot', sessionId: 'inv_1', issuedAt: 1, expiresAt: room.exp + 999 }, keys.apiKey);
    expect(claims.exp).toBe(room.exp);
    expect(claims.sub).toBe('bot:inv_1');
  });

  it('tell the roles apart by identity, and an admin token grants only room administration', () => {
    expect(roleOf(identityFor('respondent', 'inv_2'))).toBe('respondent');
    expect(roleOf(identityFor('bot', 'inv_2'))).toBe('bot');
    expect(roleOf('someone-else')).toBeNull();
    const admin = verifyJwt(mintAdminToken(keys, 1000), keys.apiSecret, 1000);
    expect(admin.ok && admin.claims.video).toEqual({ roomCreate: true, roomList: true, roomAdmin: true });
  });
});
