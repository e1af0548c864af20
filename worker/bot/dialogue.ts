import {
  ATTR_MODEL,
  ATTR_PROVIDER,
  ATTR_SESSION_ID,
  ATTR_STT_MODE,
  ATTR_TURN_END_REASON,
  ATTR_TURN_INFERENCE_MS,
  ATTR_TURN_PATIENCE_EXTRA_MS,
  ATTR_TURN_PROBABILITY,
  SPAN_STT_FINAL,
  SPAN_TURN_END,
} from '../telemetry/names.ts';
import { DecisionCalls, type DecisionCall } from './decision-calls.ts';
import type { BotEventSink } from '../telemetry/bot-events.ts';
import type { HeardTurn, Hearing, PauseWords } from './listener.ts';
import type { InterviewDefinition, InterviewQuestion } from './messages.ts';
import type { ModelTurn } from './model-turn.ts';
import { buildDecisionPrompt, type Turn } from './prompts.ts';
import type { BotRoom } from './room-link.ts';
import type { SpeakResult, Speaker } from './speaker.ts';
import { splitSentences, type SplitterOptions } from './reply/sentences.ts';

/**
 * The conversation itself: ask, hear, respond, go on. It says the intro, asks each question, hears
 * the answer, lets the language model decide on a follow-up, and says the closing; it keeps the
 * transcript's turns. It knows nothing of the room's transport, of how turns are detected, or of
 * the session's bounds: the session (interview.ts) aborts `signal` with the reason it ended.
 *
 * A premature end of turn: if the respondent starts again before the bot's first word of its
 * reply, the reply is dropped and what they say joins their answer. A backchannel over the bot
 * ("mm-hm") lets it go on from the sentence it was in.
 *
 * Patience from the words (issue 21, LLM_WAIT_MAX_MS): the decision may be WAIT (the answer has
 * plainly not finished). The bot then says nothing and keeps listening: speech joins the answer and
 * the next pause (or turn end) decides again; silence alone decides again every LLM_WAIT_STEP_MS,
 * the prompt saying how long it has lasted, and once it reaches LLM_WAIT_MAX_MS WAIT is no longer
 * offered, so the bot takes the turn. With LLM_PREEMPTIVE the decision starts at a pause, on its
 * words, before the turn's end is decided (decision-calls.ts): the same single call is then kept
 * when the turn ends with those words, WAIT included.
 */
export interface DialogueOptions {
  sessionId: string;
  interview: InterviewDefinition;
  /** Only its control messages are used here (state, captions, audio_end). */
  room: Pick<BotRoom, 'sendControl'>;
  hearing: Hearing;
  speaker: Speaker;
  modelTurn: ModelTurn;
  telemetry: BotEventSink;
  /** The speech-to-text provider, for the stt.final span. */
  stt: { provider: string; model: string };
  /** Aborted, with the session's end as its reason, when the session ends. */
  signal: AbortSignal;
  clock: () => number;
  /** How a streamed follow-up is cut for text-to-speech (REPLY_EAGER_END, REPLY_FIRST_CLAUSE_WORDS). */
  replySplit?: SplitterOptions;
  /** LLM_WAIT_MAX_MS (0: WAIT never offered), LLM_WAIT_STEP_MS, LLM_PREEMPTIVE; absent: neither (as before issue 21). */
  decisions?: DecisionSettings;
}

export interface DecisionSettings {
  waitMaxMs: number;
  waitStepMs: number;
  preemptive: boolean;
}

/** The answer being heard when a decision will follow it: a pause's words can start that decision. */
interface AwaitedAnswer {
  q: InterviewQuestion;
  followUps: number;
  /** The words will join the answer heard so far (the respondent went on). */
  joining: boolean;
}

/** An utterance of the bot, from the moment it was asked for. */
export interface SpeechHandle {
  readonly utteranceId: string;
  /** Settles once it was all sent to the room, or cut short by the respondent. */
  readonly done: Promise<SpeakResult>;
}

/** How often `quiet()` looks whether the respondent is still mid-turn. */
const QUIET_POLL_MS = 20;
const FOLLOW_UP_MAX_TOKENS = 120;

export class Dialogue {
  readonly turns: Turn[] = [];
  private readonly o: DialogueOptions;
  private utterances = 0;
  /** The respondent turn the bot is answering: its end of speech times the bot's first audio. */
  private answering: HeardTurn | null = null;
  private readonly decisions: DecisionSettings;
  private readonly calls: DecisionCalls;
  private awaited: AwaitedAnswer | null = null;

  constructor(options: DialogueOptions) {
    this.o = options;
    this.decisions = options.decisions ?? { waitMaxMs: 0, waitStepMs: 1000, preemptive: false };
    // A speculation's first sentence is synthesised ahead (never played unless its call is kept).
    this.calls = new DecisionCalls({
      modelTurn: options.modelTurn,
      signal: options.signal,
      maxTokens: FOLLOW_UP_MAX_TOKENS,
      voice: options.speaker,
      ...(options.replySplit ? { split: options.replySplit } : {}),
    });
    if (this.decisions.preemptive)
      options.hearing.watchPauses?.({ pause: (p) => this.speculate(p), resume: () => this.calls.dropSpeculation() });
  }

  /** Intro, every question, closing. Rejects with the session's end when it ends first. */
  async run(): Promise<Turn[]> {
    const { interview, speaker } = this.o;
    const questions = interview.questions;
    speaker.prepare(interview.intro);
    if (questions[0]) speaker.prepare(questions[0].text);
    await this.say(interview.intro).done;
    for (const [i, q] of questions.entries()) await this.ask(q, questions[i + 1]?.text ?? interview.closing);
    await this.quiet();
    await this.say(interview.closing).done;
    return this.turns;
  }

  /** Speaks `source` (text, or sentences as a reply streams in); the respondent may cut in. */
  say(source: string | AsyncIterable<string>, questionId?: string): SpeechHandle {
    this.check();
    const utteranceId = `u${++this.utterances}`;
    return { utteranceId, done: this.speak(source, utteranceId, questionId) };
  }

  private async speak(source: string | AsyncIterable<string>, utteranceId: string, questionId: string | undefined): Promise<SpeakResult> {
    const { room, speaker, clock, hearing } = this.o;
    room.sendControl({ type: 'state', state: 'speaking' });
    const spoken: string[] = [];
    const captioned = async function* (): AsyncIterable<string> {
      for await (const sentence of typeof source === 'string' ? splitSentences(source) : source) {
        spoken.push(sentence);
        // A question's last sentence says whether it is open or closed (how patient to be with the answer).
        if (questionId !== undefined) hearing.expectAnswerTo?.(sentence);
        room.sendControl({ type: 'caption', speaker: 'bot', text: sentence, final: true });
        yield sentence;
      }
    };
    const result = await speaker.speak(captioned());
    if (spoken.length > 0) this.turns.push({ speaker: 'bot', text: spoken.join(' '), questionId, at: new Date(clock()).toISOString() });
    if (this.answering && result.firstAudioAt !== null) {
      this.o.telemetry({ type: 'turn_latency', seconds: Math.max(0, result.firstAudioAt - this.answering.speechEndedAt) / 1000 });
      this.answering = null;
    }
    if (!result.interrupted) room.sendControl({ type: 'audio_end', utteranceId });
    this.check();
    return result;
  }

  private async ask(q: InterviewQuestion, next: string): Promise<void> {
    await this.quiet();
    let since = this.o.clock();
    await this.say(q.text, q.id).done;
    for (let followUps = 0; ; followUps++) {
      const answer = await this.hear(since, q.id, this.awaiting(q, followUps, false));
      // Whatever the decision, the next words are ready to play the moment it is made.
      this.o.speaker.prepare(next);
      since = this.o.clock();
      if ((await this.respond(q, answer, followUps)) === 'next') return;
    }
  }

  /** The respondent's answer to what the bot just asked (asked at `since`). */
  private async hear(since: number, questionId: string, awaited: AwaitedAnswer | null = null): Promise<HeardTurn> {
    this.awaited = awaited;
    try {
      return await this.hearTurn(since, questionId);
    } finally {
      this.awaited = null;
    }
  }

  private async hearTurn(since: number, questionId: string): Promise<HeardTurn> {
    for (;;) {
      this.check();
      this.o.room.sendControl({ type: 'state', state: 'listening' });
      const turn = await untilAborted(
        this.o.hearing.nextTurn(since, (stale) => this.record(stale)),
        this.o.signal,
      );
      if (turn.backchannel) {
        // "mm-hm" over the question: it goes on from the sentence that was cut.
        this.o.telemetry({ type: 'interruption', kind: 'backchannel' });
        this.calls.dropSpeculation();
        const rest = this.o.speaker.takeInterrupted();
        if (rest.length > 0) await this.say(toAsync(rest), questionId).done;
        continue;
      }
      this.o.speaker.takeInterrupted();
      this.o.room.sendControl({ type: 'state', state: 'thinking' });
      this.measure(turn);
      this.record(turn, questionId);
      this.answering = turn;
      return turn;
    }
  }

  /**
   * After an answer: the language model decides, and a follow-up is spoken sentence by sentence as
   * it is written. If the respondent starts again before the bot's first word, the reply is dropped
   * and their words join the answer. A WAIT keeps the bot listening (see the class comment).
   * Returns whether the interview moves on.
   */
  private async respond(q: InterviewQuestion, answer: HeardTurn, followUps: number): Promise<'next' | 'asked'> {
    const { hearing } = this.o;
    let current = answer;
    // A speculation started at a pause may be kept only for the answer just heard.
    let justHeard = true;
    for (;;) {
      this.check();
      if (followUps >= q.maxFollowUps) {
        if (!hearing.busy) return 'next';
        current = await this.continueAnswer(current, q, followUps);
        continue;
      }
      const silenceMs = Math.max(0, this.o.clock() - current.speechEndedAt);
      const call = (justHeard ? this.calls.claim(current.text) : null) ?? this.decide(q, this.turns, followUps, silenceMs);
      justHeard = false;
      const resumed = hearing.speechStarted();
      const first = await Promise.race([call.stream.kind, resumed.promise.then(() => 'resumed' as const)]);
      resumed.cancel();
      if (first === 'resumed') {
        call.drop();
        await call.stream.done.catch(() => undefined);
        current = await this.continueAnswer(current, q, followUps);
        justHeard = true;
        continue;
      }
      if (first === 'wait') {
        await call.stream.done.catch(() => undefined);
        if ((await this.waitForMore(current, silenceMs)) === 'resumed') {
          current = await this.continueAnswer(current, q, followUps);
          justHeard = true;
        }
        continue;
      }
      if (first === 'next') {
        await call.stream.done;
        if (!hearing.busy) return 'next';
        current = await this.continueAnswer(current, q, followUps);
        justHeard = true;
        continue;
      }
      await this.say(call.stream.sentences, q.id).done;
      await call.stream.done;
      return 'asked';
    }
  }

  /** A decision call on `turns` now. */
  private decide(q: InterviewQuestion, turns: Turn[], followUps: number, silenceMs: number): DecisionCall {
    const { prompt, waitOffered } = this.decisionPrompt(q, turns, followUps, silenceMs);
    return this.calls.start(prompt, waitOffered);
  }

  /** The decision prompt, offering WAIT while the silence is below LLM_WAIT_MAX_MS. */
  private decisionPrompt(q: InterviewQuestion, turns: Turn[], followUps: number, silenceMs: number) {
    const waitOffered = this.decisions.waitMaxMs > 0 && silenceMs < this.decisions.waitMaxMs;
    return { prompt: buildDecisionPrompt(this.o.interview, q, turns, followUps, waitOffered ? { wait: { silenceMs } } : {}), waitOffered };
  }

  /** A pause in an answer a decision will follow: start that decision on the words so far. */
  private speculate(pause: PauseWords): void {
    const awaited = this.awaited;
    if (!awaited || this.o.signal.aborted) return;
    const turns = this.turns.slice();
    const mine = turns.findLastIndex((t) => t.speaker === 'respondent' && t.questionId === awaited.q.id);
    const joined = awaited.joining && mine >= 0 ? `${turns[mine]!.text} ${pause.words}`.trim() : pause.words;
    if (awaited.joining && mine >= 0) turns[mine] = { ...turns[mine]!, text: joined };
    else turns.push({ speaker: 'respondent', text: pause.words, questionId: awaited.q.id, at: new Date(this.o.clock()).toISOString() });
    const { prompt, waitOffered } = this.decisionPrompt(
      awaited.q,
      turns,
      awaited.followUps,
      Math.max(0, this.o.clock() - pause.speechEndedAt),
    );
    this.calls.speculate(joined, prompt, waitOffered);
  }

  /** After a WAIT: until the respondent speaks again, or the silence has grown a step (or to the cap). */
  private async waitForMore(answer: HeardTurn, decidedAtSilenceMs: number): Promise<'resumed' | 'silence'> {
    const { waitMaxMs, waitStepMs } = this.decisions;
    const due = answer.speechEndedAt + Math.min(waitMaxMs, decidedAtSilenceMs + waitStepMs) - this.o.clock();
    const resumed = this.o.hearing.speechStarted();
    let timer: NodeJS.Timeout | undefined;
    const grown = new Promise<'silence'>((resolve) => (timer = setTimeout(() => resolve('silence'), Math.max(0, due))));
    try {
      return await untilAborted(Promise.race([resumed.promise.then(() => 'resumed' as const), grown]), this.o.signal);
    } finally {
      clearTimeout(timer);
      resumed.cancel();
    }
  }

  private awaiting(q: InterviewQuestion, followUps: number, joining: boolean): AwaitedAnswer | null {
    return this.decisions.preemptive && followUps < q.maxFollowUps ? { q, followUps, joining } : null;
  }

  /** The respondent went on after the turn was taken as ended: their words join the answer. */
  private async continueAnswer(answer: HeardTurn, q: InterviewQuestion, followUps: number): Promise<HeardTurn> {
    const questionId = q.id;
    const more = await this.hear(answer.startedAt, questionId, this.awaiting(q, followUps, true));
    // A silence they went on after: it teaches the respondent's pause profile.
    this.o.hearing.pausedFor?.(Math.max(0, more.startedAt - answer.speechEndedAt));
    const mine = this.turns.filter((t) => t.speaker === 'respondent' && t.questionId === questionId);
    const [previous, latest] = mine.slice(-2);
    if (previous && latest && latest.text === more.text) {
      previous.text = `${previous.text} ${more.text}`.trim();
      this.turns.splice(this.turns.lastIndexOf(latest), 1);
    }
    return { ...more, text: `${answer.text} ${more.text}`.trim(), startedAt: answer.startedAt };
  }

  /** Waits until the respondent is not mid-turn, so the bot does not start over them. */
  private async quiet(): Promise<void> {
    while (this.o.hearing.busy) {
      this.check();
      await new Promise((r) => setTimeout(r, QUIET_POLL_MS));
    }
  }

  private record(turn: HeardTurn, questionId?: string): void {
    this.o.room.sendControl({ type: 'caption', speaker: 'respondent', text: turn.text, final: true });
    this.turns.push({ speaker: 'respondent', text: turn.text, questionId, at: new Date(turn.finalAt).toISOString() });
  }

  /** The turn.end and stt.final spans of a heard turn, and what the metrics need. */
  private measure(turn: HeardTurn): void {
    const { telemetry, stt, sessionId } = this.o;
    const base = { [ATTR_SESSION_ID]: sessionId };
    const model =
      turn.probability !== undefined
        ? { [ATTR_TURN_PROBABILITY]: Number(turn.probability.toFixed(3)), [ATTR_TURN_INFERENCE_MS]: Math.round(turn.inferenceMs ?? 0) }
        : {};
    const patience = turn.patienceExtraMs > 0 ? { [ATTR_TURN_PATIENCE_EXTRA_MS]: turn.patienceExtraMs } : {};
    telemetry({
      type: 'span',
      span: {
        name: SPAN_TURN_END,
        startMs: turn.speechEndedAt,
        endMs: turn.decidedAt,
        attributes: { ...base, [ATTR_TURN_END_REASON]: turn.reason, ...model, ...patience },
      },
    });
    telemetry({
      type: 'span',
      span: {
        name: SPAN_STT_FINAL,
        startMs: turn.decidedAt,
        endMs: Math.max(turn.decidedAt, turn.finalAt),
        attributes: { ...base, [ATTR_PROVIDER]: stt.provider, [ATTR_MODEL]: stt.model, [ATTR_STT_MODE]: turn.sttMode },
      },
    });
    telemetry({
      type: 'provider_latency',
      provider: 'stt',
      operation: turn.sttMode === 'realtime' ? 'final' : 'transcribe',
      seconds: Math.max(0, turn.finalAt - turn.decidedAt) / 1000,
    });
    telemetry({ type: 'turn_end', reason: turn.reason });
  }

  private check(): void {
    if (this.o.signal.aborted) throw this.o.signal.reason as Error;
  }
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err as Error);
      },
    );
  });
}

async function* toAsync(items: string[]): AsyncIterable<string> {
  yield* items;
}
