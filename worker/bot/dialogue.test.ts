import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { silencePcm } from '../../lib/pcm.ts';
import { tonePcm } from '../../test/fakes/audio.ts';
import { MemoryRoom } from '../../test/fakes/memory-room.ts';
import { STAGE_CONFIG, withTurns } from '../../test/fakes/stage-config.ts';
import { scriptedProviders, type ProviderScript } from '../../test/fakes/scripted-providers.ts';
import { ProviderError } from '../providers/errors.ts';
import type { BotEvent } from '../telemetry/bot-events.ts';
import { SPAN_TURN_END } from '../telemetry/names.ts';
import { runInterview, type InterviewConfig } from './interview.ts';
import type { BotJob, InterviewDefinition, Outcome } from './messages.ts';

/**
 * The interview's stages driven without a worker: a room in memory, providers from a script, and
 * fake timers as the clock (the clock every stage is given), so a minute of conversation runs in
 * milliseconds and every timing is exact. The respondent is the test: it answers once it has heard
 * the bot out (as a person, and as test/worker/respondent.ts in real time), speaks over the bot, or
 * sends a whole answer at once. Energy VAD (a tone is speech), silence detection, batch text.
 */
const RATE = 16_000;
const START = Date.UTC(2026, 10, 25, 12);

const tone = (ms: number): Buffer => tonePcm(ms, RATE, 220, 0.3);
const answer = (ms = 900) => Buffer.concat([tone(ms), silencePcm(600, RATE)]);

const CONFIG = STAGE_CONFIG;

const INTERVIEW: InterviewDefinition = {
  title: 'Stages',
  language: 'en',
  intro: 'Hi.',
  questions: [{ id: 'q1', text: 'What did you like?', maxFollowUps: 1 }],
  closing: 'Thanks, bye.',
};

interface Run {
  room: MemoryRoom;
  providers: ReturnType<typeof scriptedProviders>;
  events: BotEvent[];
  bounds: () => number;
  transcript: () => { turns: Array<{ speaker: string; text: string; questionId?: string }> };
  outcome: Promise<Outcome>;
}

function start(script: ProviderScript, interview: InterviewDefinition = INTERVIEW, config: InterviewConfig = CONFIG): Run {
  const room = new MemoryRoom();
  const providers = scriptedProviders(script);
  const events: BotEvent[] = [];
  let bounds = 0;
  let stored = '';
  const job: BotJob = {
    sessionId: 'inv_stage1',
    interviewId: 'dpl_1',
    interview,
    ticket: { transport: 'local', url: 'ws://memory.invalid/', token: 'memory', room: 'memory' },
  };
  const outcome = runInterview(job, {
    room,
    providers,
    models: { vad: null, turn: null },
    store: { put: (id, body) => ((stored = body), Promise.resolve(`memory://${id}.json`)) },
    config,
    hooks: { telemetry: (e) => events.push(e), utteranceBound: () => bounds++, streamingUnavailable: () => undefined },
    stop: new AbortController().signal,
    clock: () => Date.now(),
  });
  room.join();
  return { room, providers, events, bounds: () => bounds, transcript: () => JSON.parse(stored) as ReturnType<Run['transcript']>, outcome };
}

/** Answers each `listening` once the bot's audio has played out (and 300 ms more), as a person does. */
function answerWhenHeard(room: MemoryRoom, say: (turn: number) => Buffer | null): void {
  let timer: NodeJS.Timeout | undefined;
  let turn = 0;
  room.onControl((msg) => {
    if (msg.type !== 'state') return;
    clearTimeout(timer);
    if (msg.state !== 'listening') return;
    const due = () => {
      const left = room.playingUntil - Date.now();
      if (left > 0) return void (timer = setTimeout(due, left));
      timer = setTimeout(() => {
        const pcm = say(++turn);
        if (pcm) void room.speak(pcm);
      }, 300);
    };
    due();
  });
}

/** Runs the fake clock until the interview ends (at most ten minutes of it). */
async function finish(run: Run): Promise<Outcome> {
  let result: Outcome | null = null;
  void run.outcome.then((o) => (result = o));
  for (let t = 0; t < 600_000 && result === null; t += 50) await vi.advanceTimersByTimeAsync(50);
  if (result === null) throw new Error(`the interview did not end; states: ${run.room.states().join(' ')}`);
  return result;
}

const spoken = (run: Run) => run.transcript().turns.map((t) => `${t.speaker}: ${t.text}`);

beforeEach(() => {
  vi.useFakeTimers({ now: START });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the interview in stages (memory room, scripted providers, fake clock)', () => {
  it('asks, hears, follows up, closes, and reports every measure as a typed event', async () => {
    const run = start({
      transcripts: ['I liked the onboarding.', 'The support team answered fast.'],
      replies: ['FOLLOW_UP: What about the support?'],
    });
    answerWhenHeard(run.room, () => answer());
    const outcome = await finish(run);
    expect(outcome.status, JSON.stringify(outcome)).toBe('completed');
    expect(spoken(run)).toEqual([
      'bot: Hi.',
      'bot: What did you like?',
      'respondent: I liked the onboarding.',
      'bot: What about the support?',
      'respondent: The support team answered fast.',
      'bot: Thanks, bye.',
    ]);
    expect(run.room.controls.at(-1)).toEqual({ type: 'ended', reason: 'completed' });
    const kinds = run.events.map((e) => (e.type === 'span' ? `span:${e.span.name}` : e.type));
    expect(kinds.filter((k) => k === 'turn_end')).toHaveLength(2);
    expect(kinds.filter((k) => k === 'turn_latency')).toHaveLength(2);
    expect(kinds.filter((k) => k === 'span:llm.turn')).toHaveLength(2); // the decision after the first answer, the summary
    expect(run.events).toContainEqual({ type: 'turn_end', reason: 'silence' });
    // The bot's first audio after an answer follows the end of its speech by the silence rule
    // (300 ms), the text and the model's first sentence: a fake clock makes it exact enough to bound.
    const latency = run.events.find((e) => e.type === 'turn_latency');
    expect(latency && latency.type === 'turn_latency' ? latency.seconds : -1).toBeGreaterThan(0.3);
    expect(run.bounds()).toBe(0);
  });

  it('holds a short answer to an open question until TURN_HOLD_MS, and ends one to a closed question at the silence rule (issue 40)', async () => {
    const interview: InterviewDefinition = {
      ...INTERVIEW,
      questions: [
        { id: 'q1', text: 'What did you like?', maxFollowUps: 0 },
        { id: 'q2', text: 'Did you finish the setup?', maxFollowUps: 0 },
      ],
    };
    const run = start({ transcripts: ['The onboarding.', 'Yes.'] }, interview, withTurns(CONFIG, { endpointing: { holdMs: 2200 } }));
    answerWhenHeard(run.room, () => Buffer.concat([tone(900), silencePcm(3000, RATE)]));
    expect((await finish(run)).status).toBe('completed');
    const waits = run.events.flatMap((e) => (e.type === 'span' && e.span.name === SPAN_TURN_END ? [e.span.endMs - e.span.startMs] : []));
    expect(waits).toHaveLength(2);
    expect(waits[0]).toBeGreaterThanOrEqual(2200);
    expect(waits[1]).toBeLessThan(400);
  });

  it("warms the providers' connections each time the respondent starts to speak (issue 21)", async () => {
    const run = start({
      transcripts: ['I liked the onboarding.', 'The support team answered fast.'],
      replies: ['FOLLOW_UP: What about the support?'],
    });
    const answersAt: number[] = [];
    answerWhenHeard(run.room, () => (answersAt.push(Date.now() + 300), answer()));
    expect((await finish(run)).status).toBe('completed');
    // Two answers: each warms once, when its speech is recognised (100 ms into it), not at its end.
    expect(run.providers.calls.warm).toHaveLength(2);
    run.providers.calls.warm.forEach((at, i) => expect(at - answersAt[i]!).toBeLessThan(200));
  });

  it("speaks a follow-up's first clause, and a sentence that ends the reply, before the model's stream ends (issue 21)", async () => {
    // A provider that writes a piece every 40 ms and holds the stream open 400 ms after the last.
    const reply = 'FOLLOW_UP: When your manager first stepped in, what exactly did they change for the team?';
    const script = { transcripts: ['I liked the onboarding.', 'It got better.'], replies: [reply], llmPieceMs: 40, llmEndMs: 400 };
    const run = start(script);
    answerWhenHeard(run.room, () => answer());
    expect((await finish(run)).status).toBe('completed');
    const { tts, ttsAt, llmEndedAt } = run.providers.calls;
    const clause = tts.indexOf('When your manager first stepped in,');
    const rest = tts.indexOf('what exactly did they change for the team?');
    expect(clause, tts.join(' | ')).toBeGreaterThan(-1);
    expect(rest).toBe(clause + 1);
    // The clause goes to speech pieces before the "?" is written, the rest as soon as it is.
    expect(ttsAt[rest]! - ttsAt[clause]!).toBeGreaterThanOrEqual(2 * 40);
    expect(llmEndedAt[0]! - ttsAt[rest]!).toBeGreaterThanOrEqual(400);
    expect(spoken(run)).toContain(`bot: ${reply.slice('FOLLOW_UP: '.length)}`);
  });

  it('with REPLY_EAGER_END=false and REPLY_FIRST_CLAUSE_WORDS=0, speaks the follow-up when the stream ends, as before', async () => {
    const reply = 'FOLLOW_UP: When your manager first stepped in, what exactly did they change for the team?';
    const script = { transcripts: ['I liked the onboarding.', 'It got better.'], replies: [reply], llmPieceMs: 40, llmEndMs: 400 };
    const run = start(script, INTERVIEW, withTurns(CONFIG, { reply: { eagerEnd: false, firstClauseWords: 0 } }));
    answerWhenHeard(run.room, () => answer());
    expect((await finish(run)).status).toBe('completed');
    const { tts, ttsAt, llmEndedAt } = run.providers.calls;
    const whole = tts.indexOf(reply.slice('FOLLOW_UP: '.length));
    expect(whole, tts.join(' | ')).toBeGreaterThan(-1);
    expect(ttsAt[whole]).toBeGreaterThanOrEqual(llmEndedAt[0]!);
  });

  it('joins up an answer whose turn was taken as ended too soon, and drops the reply it had begun', async () => {
    // The respondent pauses 400 ms (more than VAD_SILENCE_MS) mid-answer; the model is slow, so
    // they go on before the bot's first word: one answer, and the follow-up is never spoken.
    const run = start({ transcripts: ['I liked', 'the onboarding.'], replies: ['FOLLOW_UP: Why was that?', 'NEXT'], llmDelayMs: 1500 });
    answerWhenHeard(run.room, (turn) =>
      turn === 1 ? Buffer.concat([tone(700), silencePcm(400, RATE), tone(700), silencePcm(600, RATE)]) : null,
    );
    const outcome = await finish(run);
    expect(outcome.status, JSON.stringify(outcome)).toBe('completed');
    expect(spoken(run)).toEqual(['bot: Hi.', 'bot: What did you like?', 'respondent: I liked the onboarding.', 'bot: Thanks, bye.']);
    expect(run.providers.calls.tts.join(' ')).not.toContain('Why was that?');
  });

  it('pauses at speech over it, and after a backchannel goes on from where it paused (issue 21)', async () => {
    const question = 'First, think of your first week. Then, tell me what you liked. Take your time.';
    const run = start(
      { transcripts: ['mm-hm', 'I liked the onboarding.'] },
      { ...INTERVIEW, questions: [{ id: 'q1', text: question, maxFollowUps: 0 }] },
    );
    // "mm-hm" 500 ms into the question (its first sentence is playing), then the answer once heard.
    let said = false;
    run.room.onControl((msg) => {
      if (said || msg.type !== 'caption' || msg.text !== 'First, think of your first week.') return;
      said = true;
      setTimeout(() => void run.room.speak(Buffer.concat([tone(300), silencePcm(600, RATE)])), 500);
    });
    answerWhenHeard(run.room, () => answer());
    const outcome = await finish(run);
    expect(outcome.status, JSON.stringify(outcome)).toBe('completed');
    // The page dropped its queue once (the pause); it was never an interruption.
    expect(run.room.interrupts, JSON.stringify(run.room.controls)).toBe(1);
    expect(run.events.filter((e) => e.type === 'interruption')).toEqual([{ type: 'interruption', kind: 'backchannel' }]);
    expect(spoken(run)).toEqual(['bot: Hi.', `bot: ${question}`, 'respondent: I liked the onboarding.', 'bot: Thanks, bye.']);
    // The page hears it speaking again, then listening.
    expect(
      run.room.controls
        .slice(run.room.interruptedAfter[0])
        .filter((c) => c.type === 'state')
        .map((c) => c.state)
        .slice(0, 2),
    ).toEqual(['speaking', 'listening']);
    // Heard: the intro (250 ms), the question once through (15 words, 3750 ms) and the closing
    // (500 ms), with at most the one 20 ms frame that was playing at the pause heard twice.
    expect(run.room.heardMs()).toBeGreaterThanOrEqual(250 + 3750 + 500);
    expect(run.room.heardMs()).toBeLessThanOrEqual(250 + 3750 + 500 + 20);
  });

  it('with BARGE_IN_MODE=stop, stops at once and after a backchannel goes on from the cut sentence', async () => {
    const question = 'First, think of your first week. Then, tell me what you liked. Take your time.';
    const config = withTurns(CONFIG, { interruption: { mode: 'stop' } });
    const run = start(
      { transcripts: ['mm-hm', 'I liked the onboarding.'] },
      { ...INTERVIEW, questions: [{ id: 'q1', text: question, maxFollowUps: 0 }] },
      config,
    );
    // "mm-hm" 500 ms into the question (its first sentence is playing), then the answer once heard.
    let said = false;
    run.room.onControl((msg) => {
      if (said || msg.type !== 'caption' || msg.text !== 'First, think of your first week.') return;
      said = true;
      setTimeout(() => void run.room.speak(Buffer.concat([tone(300), silencePcm(600, RATE)])), 500);
    });
    answerWhenHeard(run.room, () => answer());
    const outcome = await finish(run);
    expect(outcome.status, JSON.stringify(outcome)).toBe('completed');
    expect(run.room.interrupts, JSON.stringify(run.room.controls)).toBe(1);
    expect(run.events.filter((e) => e.type === 'interruption')).toEqual([
      { type: 'interruption', kind: 'barge_in' },
      { type: 'interruption', kind: 'backchannel' },
    ]);
    expect(spoken(run)).toEqual([
      'bot: Hi.',
      `bot: ${question}`,
      `bot: ${question}`,
      'respondent: I liked the onboarding.',
      'bot: Thanks, bye.',
    ]);
  });

  it('stops at once when the respondent talks over it, and takes what they said as the answer', async () => {
    const question = 'Tell me about your first week. What went well? What did not?';
    const run = start(
      { transcripts: ['Honestly the first week was rough.'] },
      { ...INTERVIEW, questions: [{ id: 'q1', text: question, maxFollowUps: 0 }] },
    );
    let sentAtBargeIn = -1;
    run.room.onControl((msg) => {
      if (msg.type === 'caption' && msg.text === 'Tell me about your first week.') setTimeout(() => void run.room.speak(answer(1500)), 500);
    });
    const interrupt = run.room.interrupt.bind(run.room);
    run.room.interrupt = () => ((sentAtBargeIn = run.room.audioBytes), interrupt());
    const outcome = await finish(run);
    expect(outcome.status, JSON.stringify(outcome)).toBe('completed');
    expect(run.events.filter((e) => e.type === 'interruption')).toEqual([{ type: 'interruption', kind: 'barge_in' }]);
    expect(spoken(run)).toEqual(['bot: Hi.', `bot: ${question}`, 'respondent: Honestly the first week was rough.', 'bot: Thanks, bye.']);
    // Nothing of the question was sent after the barge-in (only the closing, 2 words of 250 ms).
    expect(run.room.audioBytes - sentAtBargeIn).toBe(2 * 250 * 48);
  });

  it("ends as failed, with the provider's reason, when the language model fails", async () => {
    const run = start({ replies: [new ProviderError('llm', 'timeout', true, 'The language model did not answer in time.')] });
    answerWhenHeard(run.room, () => answer());
    const outcome = await finish(run);
    expect(outcome).toEqual({ status: 'failed', reason: 'llm_timeout', message: 'The language model did not answer in time.' });
    expect(run.room.controls.at(-1)).toEqual({ type: 'ended', reason: 'failed' });
    const llm = run.events.find((e) => e.type === 'span' && e.span.name === 'llm.turn');
    expect(llm?.type === 'span' && llm.span.error).toBe('The language model did not answer in time.');
  });

  it('hears an answer sent in one burst, the moment the bot says it listens (issue 19)', async () => {
    const run = start({ transcripts: ['I liked the onboarding.', 'The support.'], replies: ['FOLLOW_UP: And the support?'] });
    run.room.onControl((msg) => {
      if (msg.type === 'state' && msg.state === 'listening') run.room.burst(answer(), 300);
    });
    const outcome = await finish(run);
    expect(outcome.status, JSON.stringify(outcome)).toBe('completed');
    expect(spoken(run).filter((t) => t.startsWith('respondent'))).toEqual([
      'respondent: I liked the onboarding.',
      'respondent: The support.',
    ]);
  });

  it('goes on after a flood of audio, and asks for the process to be recycled (issue 19)', async () => {
    const run = start({ transcripts: ['flood', 'I liked the onboarding.'], replies: ['FOLLOW_UP: Could you say that again?'] });
    let flooded = false;
    run.room.onControl((msg) => {
      if (flooded || msg.type !== 'state' || msg.state !== 'listening') return;
      flooded = true;
      // 40 messages of 256 KB (about 5.5 minutes of audio) in one turn of the event loop.
      const loud = tone(8192);
      for (let i = 0; i < 40; i++) run.room.emit('audio', Buffer.from(loud));
    });
    // The flood is the first answer (its turn ends at the bound); the follow-up is answered as usual.
    answerWhenHeard(run.room, () => answer());
    const outcome = await finish(run);
    expect(outcome.status, JSON.stringify({ outcome, controls: run.room.controls, stt: run.providers.calls.stt })).toBe('completed');
    expect(run.bounds()).toBeGreaterThan(0);
    expect(spoken(run)).toContain('respondent: I liked the onboarding.');
  });
});

describe('the decision at a pause: WAIT and preemptive calls (issue 21)', () => {
  // Realtime text (a scripted stream: one segment per pause), silence detection: a pause commits
  // the words at 200 ms of silence, the turn ends at 300 ms.
  const REALTIME: InterviewConfig = withTurns(CONFIG, { engines: { sttMode: 'realtime' } });
  const TRAILING_OFF = [{ words: '\\.\\.\\.$', reply: 'WAIT' }];
  const decisionCalls = (run: Run) => run.providers.calls.llm.filter((m) => m[0]?.content.includes('follow-up'));
  const offersWait = (messages: Array<{ content: string }>) => messages[0]!.content.includes('reply with exactly WAIT');
  const llmSpans = (run: Run) =>
    run.events.flatMap((e) =>
      e.type === 'span' && e.span.name === 'llm.turn' && e.span.attributes['llm.purpose'] === 'follow_up' ? [e.span] : [],
    );
  const turnEnds = (run: Run) => run.events.flatMap((e) => (e.type === 'span' && e.span.name === 'turn.end' ? [e.span.endMs] : []));
  // "We tried..." and 1.2 s of thought, then "a few tools.": one answer.
  const thinking = () => Buffer.concat([tone(700), silencePcm(1200, RATE), tone(700), silencePcm(600, RATE)]);

  it('keeps listening on WAIT, decided by one call started at the pause, and decides again on the whole answer', async () => {
    const run = start({ segments: ['We tried...', 'a few tools.'], rules: TRAILING_OFF, replies: ['NEXT'] }, INTERVIEW, REALTIME);
    answerWhenHeard(run.room, (turn) => (turn === 1 ? thinking() : null));
    expect((await finish(run)).status).toBe('completed');
    expect(spoken(run)).toEqual(['bot: Hi.', 'bot: What did you like?', 'respondent: We tried... a few tools.', 'bot: Thanks, bye.']);
    // Two decisions, each one call started at its pause, before its turn ended: WAIT on "We
    // tried...", NEXT on the whole answer. No second call for the first part.
    const calls = decisionCalls(run);
    expect(calls).toHaveLength(2);
    expect(calls.every(offersWait)).toBe(true);
    const [end1, end2] = turnEnds(run);
    const [at1, at2] = run.providers.calls.llmAt;
    expect(at1!).toBeLessThan(end1!);
    expect(at2!).toBeGreaterThan(end1!);
    expect(at2!).toBeLessThan(end2!);
    expect(llmSpans(run).map((s) => [s.attributes['llm.speculative'], s.attributes['llm.dropped']])).toEqual([
      [true, undefined],
      [true, undefined],
    ]);
  });

  it('with LLM_WAIT_MAX_MS=0, takes the turn at the pause and moves on, as before', async () => {
    const config = withTurns(REALTIME, { reply: { llmWaitMaxMs: 0 } });
    const run = start({ segments: ['We tried...', 'a few tools.'], rules: TRAILING_OFF, replies: ['NEXT'] }, INTERVIEW, config);
    answerWhenHeard(run.room, (turn) => (turn === 1 ? thinking() : null));
    expect((await finish(run)).status).toBe('completed');
    expect(decisionCalls(run).some(offersWait)).toBe(false);
    // The bot spoke its closing into the thinking pause; "a few tools." came after it.
    expect(spoken(run).slice(2, 4)).toEqual(['respondent: We tried...', 'bot: Thanks, bye.']);
  });

  it('after WAIT, decides again as the silence grows, and takes the turn at LLM_WAIT_MAX_MS', async () => {
    const run = start({ segments: ['We tried...'], rules: TRAILING_OFF, replies: ['NEXT'] }, INTERVIEW, REALTIME);
    let speechEnd = 0;
    answerWhenHeard(run.room, (turn) => (turn === 1 ? ((speechEnd = Date.now() + 700), answer(700)) : null));
    expect((await finish(run)).status).toBe('completed');
    expect(spoken(run)).toEqual(['bot: Hi.', 'bot: What did you like?', 'respondent: We tried...', 'bot: Thanks, bye.']);
    const calls = decisionCalls(run);
    // At the pause, then every 1.5 s of silence while the model says WAIT, then at the 4 s cap without WAIT.
    expect(calls.map(offersWait)).toEqual([true, true, true, false]);
    expect(calls.slice(0, 3).map((m) => /silent for ([\d.]+) s/.exec(m[0]!.content)?.[1])).toEqual(['0.3', '1.8', '3.3']);
    // Counted from the last voiced frame the bot heard (within a frame of the tone's end).
    const last = run.providers.calls.llmAt[3]! - speechEnd;
    expect(last).toBeGreaterThanOrEqual(4000 - 40);
    expect(last).toBeLessThan(4100);
  });

  it('drops a call started at a pause when the respondent goes on: cancelled, never spoken, marked in its span', async () => {
    // A 250 ms pause: its words are in at 220 ms, the respondent goes on at 250 ms (the turn lives on).
    const run = start(
      { segments: ['I liked', 'the onboarding.'], replies: ['FOLLOW_UP: Why was that?', 'NEXT'], sttDelayMs: 20 },
      INTERVIEW,
      REALTIME,
    );
    answerWhenHeard(run.room, (turn) =>
      turn === 1 ? Buffer.concat([tone(700), silencePcm(250, RATE), tone(700), silencePcm(600, RATE)]) : null,
    );
    expect((await finish(run)).status).toBe('completed');
    expect(spoken(run)).toEqual(['bot: Hi.', 'bot: What did you like?', 'respondent: I liked the onboarding.', 'bot: Thanks, bye.']);
    expect(run.providers.calls.tts.join(' ')).not.toContain('Why was that?');
    expect(run.providers.calls.llmAborted).toBe(1);
    const spans = llmSpans(run);
    expect(spans.map((s) => [s.attributes['llm.speculative'], s.attributes['llm.dropped'], s.error])).toEqual([
      [true, true, undefined],
      [true, undefined, undefined],
    ]);
  });

  it('with LLM_PREEMPTIVE=false, starts the decision only when the turn has ended, as before', async () => {
    const config = withTurns(REALTIME, { reply: { llmPreemptive: false } });
    const run = start({ segments: ['I liked the onboarding.'], replies: ['NEXT'] }, INTERVIEW, config);
    answerWhenHeard(run.room, (turn) => (turn === 1 ? answer() : null));
    expect((await finish(run)).status).toBe('completed');
    expect(run.providers.calls.llmAt[0]!).toBeGreaterThanOrEqual(turnEnds(run)[0]!);
    expect(llmSpans(run).map((s) => s.attributes['llm.speculative'])).toEqual([undefined]);
  });
});

describe('work before the end of the answer (issue 40, step 3)', () => {
  // Realtime text, silence detection, and the hold: a four-word answer to the open first question
  // is held until 2.2 s of silence; the decision starts at the pause (200 ms) on its words.
  const HELD: InterviewConfig = withTurns(CONFIG, { engines: { sttMode: 'realtime' }, endpointing: { holdMs: 2200 } });
  const turnEnds = (run: Run) => run.events.flatMap((e) => (e.type === 'span' && e.span.name === 'turn.end' ? [e.span.endMs] : []));
  const captionedAt = (run: Run, text: string) => {
    const at: number[] = [];
    run.room.onControl((msg) => {
      if (msg.type === 'caption' && msg.text === text) at.push(Date.now());
    });
    return at;
  };

  it("starts the model call and synthesises the follow-up's first sentence during the hold, and speaks it only when the turn ends", async () => {
    const run = start(
      { segments: ['We tried a few tools.', 'Spreadsheets, mostly.'], replies: ['FOLLOW_UP: Which tools did you try?', 'NEXT'] },
      INTERVIEW,
      HELD,
    );
    const followUpAt = captionedAt(run, 'Which tools did you try?');
    answerWhenHeard(run.room, () => Buffer.concat([tone(900), silencePcm(3000, RATE)]));
    expect((await finish(run)).status).toBe('completed');
    expect(spoken(run).slice(1, 4)).toEqual([
      'bot: What did you like?',
      'respondent: We tried a few tools.',
      'bot: Which tools did you try?',
    ]);
    const [end] = turnEnds(run);
    const synthesisedAt = run.providers.calls.ttsAt[run.providers.calls.tts.indexOf('Which tools did you try?')]!;
    // Both started inside the hold, long before the turn's end; the audio reached the room after it.
    expect(run.providers.calls.llmAt[0]!).toBeLessThan(end! - 1500);
    expect(synthesisedAt).toBeLessThan(end! - 1500);
    expect(followUpAt[0]!).toBeGreaterThanOrEqual(end!);
    // Synthesised once: the speech used what was made ahead.
    expect(run.providers.calls.tts.filter((t) => t === 'Which tools did you try?')).toHaveLength(1);
  });

  it('never plays a reply made ahead for a turn that went on: the respondent spoke again in the hold', async () => {
    const run = start(
      { segments: ['We tried a few tools.', 'Mostly spreadsheets.'], replies: ['FOLLOW_UP: Which tools did you try?', 'NEXT'] },
      INTERVIEW,
      HELD,
    );
    const followUpAt = captionedAt(run, 'Which tools did you try?');
    answerWhenHeard(run.room, (turn) =>
      turn === 1 ? Buffer.concat([tone(900), silencePcm(1500, RATE), tone(900), silencePcm(3000, RATE)]) : null,
    );
    expect((await finish(run)).status).toBe('completed');
    // Made during the first pause, then the respondent went on: never captioned, never spoken.
    expect(run.providers.calls.tts).toContain('Which tools did you try?');
    expect(followUpAt).toEqual([]);
    expect(spoken(run)).toEqual([
      'bot: Hi.',
      'bot: What did you like?',
      'respondent: We tried a few tools. Mostly spreadsheets.',
      'bot: Thanks, bye.',
    ]);
  });
});
