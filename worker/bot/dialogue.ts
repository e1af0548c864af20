import { ATTR_MODEL, ATTR_PROVIDER, ATTR_SESSION_ID, ATTR_STT_MODE, ATTR_TURN_END_REASON, ATTR_TURN_INFERENCE_MS, ATTR_TURN_PROBABILITY, SPAN_STT_FINAL, SPAN_TURN_END } from '../telemetry/names.ts';
import type { BotEventSink } from './events.ts';
import type { HeardTurn, Hearing } from './listener.ts';
import type { InterviewDefinition, InterviewQuestion } from './messages.ts';
import type { ModelTurn } from './model-turn.ts';
import { buildDecisionPrompt, type Turn } from './prompts.ts';
import type { BotRoom } from './room-link.ts';
import type { SpeakResult, Speaker } from './speaker.ts';
import { streamDecision } from './turns/decision-stream.ts';
import { splitSentences, type SplitterOptions } from './turns/sentences.ts';

/**
 * The conversation itself: ask, hear, respond, go on. It says the intro, asks each question, hears
 * the answer, lets the language model decide on a follow-up, and says the closing; it keeps the
 * transcript's turns. It knows nothing of the room's transport, of how turns are detected, or of
 * the session's bounds: the session (interview.ts) aborts `signal` with the reason it ended.
 *
 * A premature end of turn: if the respondent starts again before the bot's first word of its
 * reply, the reply is dropped and what they say joins their answer. A backchannel over the bot
 * ("mm-hm") lets it go on from the sentence it was in.
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

  constructor(options: DialogueOptions) {
    this.o = options;
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
    const { room, speaker, clock } = this.o;
    room.sendControl({ type: 'state', state: 'speaking' });
    const spoken: string[] = [];
    const captioned = async function* (): AsyncIterable<string> {
      for await (const sentence of typeof source === 'string' ? splitSentences(source) : source) {
        spoken.push(sentence);
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
      const answer = await this.hear(since, q.id);
      // Whatever the decision, the next words are ready to play the moment it is made.
      this.o.speaker.prepare(next);
      since = this.o.clock();
      if ((await this.respond(q, answer, followUps)) === 'next') return;
    }
  }

  /** The respondent's answer to what the bot just asked (asked at `since`). */
  private async hear(since: number, questionId: string): Promise<HeardTurn> {
    for (;;) {
      this.check();
      this.o.room.sendControl({ type: 'state', state: 'listening' });
      const turn = await untilAborted(this.o.hearing.nextTurn(since, (stale) => this.record(stale)), this.o.signal);
      if (turn.backchannel) {
        // "mm-hm" over the question: it goes on from the sentence that was cut.
        this.o.telemetry({ type: 'interruption', kind: 'backchannel' });
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
   * and their words join the answer. Returns whether the interview moves on.
   */
  private async respond(q: InterviewQuestion, answer: HeardTurn, followUps: number): Promise<'next' | 'asked'> {
    const { hearing } = this.o;
    let current = answer;
    for (;;) {
      this.check();
      if (followUps >= q.maxFollowUps) {
        if (!hearing.busy) return 'next';
        current = await this.continueAnswer(current, q.id);
        continue;
      }
      const dropped = new AbortController();
      const prompt = buildDecisionPrompt(this.o.interview, q, this.turns, followUps);
      const decision = streamDecision(this.o.modelTurn.stream(prompt, { purpose: 'follow_up', signal: AbortSignal.any([this.o.signal, dropped.signal]), maxTokens: FOLLOW_UP_MAX_TOKENS }), this.o.replySplit);
      const resumed = hearing.speechStarted();
      const first = await Promise.race([decision.kind, resumed.promise.then(() => 'resumed' as const)]);
      resumed.cancel();
      if (first === 'resumed') {
        dropped.abort();
        await decision.done.catch(() => undefined);
        current = await this.continueAnswer(current, q.id);
        continue;
      }
      if (first === 'next') {
        await decision.done;
        if (!hearing.busy) return 'next';
        current = await this.continueAnswer(current, q.id);
        continue;
      }
      await this.say(decision.sentences, q.id).done;
      await decision.done;
      return 'asked';
    }
  }

  /** The respondent went on after the turn was taken as ended: their words join the answer. */
  private async continueAnswer(answer: HeardTurn, questionId: string): Promise<HeardTurn> {
    const more = await this.hear(answer.startedAt, questionId);
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
    const model = turn.probability !== undefined ? { [ATTR_TURN_PROBABILITY]: Number(turn.probability.toFixed(3)), [ATTR_TURN_INFERENCE_MS]: Math.round(turn.inferenceMs ?? 0) } : {};
    telemetry({ type: 'span', span: { name: SPAN_TURN_END, startMs: turn.speechEndedAt, endMs: turn.decidedAt, attributes: { ...base, [ATTR_TURN_END_REASON]: turn.reason, ...model } } });
    telemetry({ type: 'span', span: { name: SPAN_STT_FINAL, startMs: turn.decidedAt, endMs: Math.max(turn.decidedAt, turn.finalAt), attributes: { ...base, [ATTR_PROVIDER]: stt.provider, [ATTR_MODEL]: stt.model, [ATTR_STT_MODE]: turn.sttMode } } });
    telemetry({ type: 'provider_latency', provider: 'stt', operation: turn.sttMode === 'realtime' ? 'final' : 'transcribe', seconds: Math.max(0, turn.finalAt - turn.decidedAt) / 1000 });
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
