import { describe, expect, it } from 'vitest';
import { roomKind } from './room.ts';

const jwt = (claims: object): string => `h.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.s`;

describe('roomKind: which client opens the connect answer room', () => {
  it('opens https rooms with the Daily client', () => {
    expect(roomKind('https://team.daily.co/room', 'token')).toBe('daily');
  });

  it('tells a LiveKit server from a local room by the token on ws(s) addresses', () => {
    expect(roomKind('ws://127.0.0.1:7880', jwt({ video: { room: 'rm_1', roomJoin: true } }))).toBe('livekit');
    expect(roomKind('wss://lk.example.com', jwt({ sub: 'respondent:inv_1', video: { room: 'rm_1' } }))).toBe('livekit');
    expect(roomKind('wss://worker.example.com/rooms/rm_1', jwt({ room: 'rm_1', role: 'respondent' }))).toBe('local');
    expect(roomKind('ws://127.0.0.1:7860/rooms/rm_1', 'not-a-jwt')).toBe('local');
  });

  it('refuses other schemes and unparsable addresses', () => {
    expect(roomKind('http://x.example.com', 't')).toBeNull();
    expect(roomKind('not a url', 't')).toBeNull();
  });
});
