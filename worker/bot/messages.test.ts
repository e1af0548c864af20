import { describe, expect, it } from 'vitest';
import { ToBotSchema } from './messages.ts';

/** The worker's messages as the bot checks them: a job carries a join ticket, not a URL to take apart. */
const interview = { title: 'T', language: 'en', intro: 'Hi.', questions: [{ id: 'q1', text: 'Why?', maxFollowUps: 1 }], closing: 'Bye.' };
const ticket = { transport: 'livekit', url: 'wss://lk.example.com', token: 'header.payload.signature', room: 'rm_1' };
const assign = { type: 'assign', job: { sessionId: 'inv_1', interviewId: 'dpl_1', interview, ticket } };

describe('the worker-to-bot messages', () => {
  it('accept a job with its join ticket, and a stop', () => {
    expect(ToBotSchema.parse(assign)).toEqual(assign);
    expect(ToBotSchema.parse({ type: 'stop', sessionId: 'inv_1', reason: 'worker_shutdown' })).toEqual({
      type: 'stop',
      sessionId: 'inv_1',
      reason: 'worker_shutdown',
    });
  });

  it('refuse a job without a usable ticket: none, a join URL instead, a transport nobody registered, no token', () => {
    const { ticket: _none, ...job } = assign.job;
    expect(ToBotSchema.safeParse({ type: 'assign', job }).success).toBe(false);
    expect(
      ToBotSchema.safeParse({ type: 'assign', job: { ...job, joinUrl: 'wss://lk.example.com?token=t', roomProvider: 'livekit' } }).success,
    ).toBe(false);
    expect(ToBotSchema.safeParse({ ...assign, job: { ...assign.job, ticket: { ...ticket, transport: 'zoom' } } }).success).toBe(false);
    expect(ToBotSchema.safeParse({ ...assign, job: { ...assign.job, ticket: { ...ticket, token: undefined } } }).success).toBe(false);
    expect(ToBotSchema.safeParse({ type: 'reboot' }).success).toBe(false);
  });
});
