import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { BotProcess } from '../../worker/bot/supervisor.ts';
import type { BotJob, Outcome } from '../../worker/bot/messages.ts';
import { baseEnv } from './harness.ts';

/**
 * The worker-to-bot boundary seen from the worker: a real bot process, forked by the supervisor as
 * the worker does, gets a job whose join ticket it cannot accept. It refuses the job whole (it never
 * tries to join anything) and still ends the session, so the session is reported and the slot freed.
 */
let bot: BotProcess | undefined;
afterEach(async () => {
  await bot?.stop();
});

const interview = { title: 'T', language: 'en', intro: 'Hi.', questions: [{ id: 'q1', text: 'Why?', maxFollowUps: 1 }], closing: 'Bye.' };

describe('a bot given a job it cannot read', () => {
  it('answers failed (bot_error) naming the field, never the token, and is free again', async () => {
    // The model endpoints are never called: the job ends before the interview starts.
    const env = baseEnv({
      redisUrl: 'redis://127.0.0.1:1',
      backendUrl: 'http://127.0.0.1:1',
      llmUrl: 'http://127.0.0.1:1/v1',
      VAD_ENGINE: 'energy',
      TURN_DETECTION: 'silence',
      STT_MODE: 'batch',
    });
    bot = new BotProcess('test/0', env);
    bot.start();
    await once(bot, 'ready');
    // A ticket for a transport no one registered (and a join URL of the old kind beside it).
    const job = {
      sessionId: 'inv_badticket',
      interviewId: 'dpl_1',
      interview,
      ticket: { transport: 'zoom', url: 'wss://zoom.example.com', token: 'secret-bot-token', room: 'rm_1' },
    };
    const finished = once(bot, 'finished') as Promise<[string, Outcome]>;
    expect(bot.assign(job as unknown as BotJob)).toBe(true);
    const [sessionId, outcome] = await finished;
    expect(sessionId).toBe('inv_badticket');
    expect(outcome).toMatchObject({
      status: 'failed',
      reason: 'bot_error',
      message: expect.stringMatching(/^The bot could not read its job \(job\.ticket\.transport: /),
    });
    expect(JSON.stringify(outcome)).not.toContain('secret-bot-token');
    expect(bot.state).toBe('idle');
  }, 60_000);
});
