import { describe, expect, it } from 'vitest';
import { guessRoomKind, roomKind } from './room.ts';

const jwt = (claims: object): string => `h.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.s`;

describe('guessRoomKind: which client opens the room of an answer that does not name its transport', () => {
  it('opens https rooms with the Daily client', () => {
    expect(guessRoomKind('https://team.daily.co/room', 'token')).toBe('daily');
  });

  it('tells a LiveKit server from a local room by the token on ws(s) addresses', () => {
    expect(guessRoomKind('ws://127.0.0.1:7880', jwt({ video: { room: 'rm_1', roomJoin: true } }))).toBe('livekit');
    expect(guessRoomKind('wss://lk.example.com', jwt({ sub: 'respondent:inv_1', video: { room: 'rm_1' } }))).toBe('livekit');
    expect(guessRoomKind('wss://worker.example.com/rooms/rm_1', jwt({ room: 'rm_1', role: 'respondent' }))).toBe('local');
    expect(guessRoomKind('ws://127.0.0.1:7860/rooms/rm_1', 'not-a-jwt')).toBe('local');
  });

  it('refuses other schemes and unparsable addresses', () => {
    expect(guessRoomKind('http://x.example.com', 't')).toBeNull();
    expect(guessRoomKind('not a url', 't')).toBeNull();
  });
});

describe('roomKind: the connect answer names its transport', () => {
  it('takes the named transport over any guess from the address', () => {
    // A LiveKit server behind https, and a local room whose token looks like LiveKit's: the name wins.
    expect(roomKind({ room_url: 'https://lk.example.com', token: 't', transport: 'livekit' })).toBe('livekit');
    expect(roomKind({ room_url: 'wss://worker.example.com/rooms/rm_1', token: jwt({ video: {} }), transport: 'local' })).toBe('local');
    expect(roomKind({ room_url: 'wss://x.example.com', token: 't', transport: 'daily' })).toBe('daily');
  });

  it('falls back to the guess when an older worker names none, or names one the page does not know', () => {
    expect(roomKind({ room_url: 'https://team.daily.co/room', token: 't' })).toBe('daily');
    expect(roomKind({ room_url: 'wss://lk.example.com', token: jwt({ video: { room: 'rm_1' } }) })).toBe('livekit');
    expect(roomKind({ room_url: 'wss://worker.example.com/rooms/rm_1', token: 't', transport: 'pigeon' })).toBe('local');
  });
});
