import type { ChatMessage } from '../providers/llm.ts';
import { DroppedReply, type ModelTurn } from './model-turn.ts';
import { streamDecision, type DecisionStream } from './reply/decision-stream.ts';
import type { SplitterOptions } from './reply/sentences.ts';

/**
 * The language model's decision calls of one session (NEXT, a follow-up, or WAIT). A call starts
 * either when the turn has ended, or speculatively on the words of a pause, before the end of the
 * turn is decided (preemptive generation, issue 21, LLM_PREEMPTIVE). A speculation is kept when the
 * turn ends with the same words (compared without case and punctuation) and dropped otherwise, or
 * as soon as the respondent speaks again: dropped means aborted (the provider's request is
 * cancelled) and never read for speech. At most one speculation runs at a time.
 *
 * The voice ahead (issue 40, step 3): a speculation's first follow-up sentence is given to the
 * voice to synthesise (`voice.prepare`) as soon as it is written, so a kept speculation's first
 * audio is ready when the turn ends; nothing is played before the dialogue speaks the kept call.
 * A dropped speculation's prepared audio is discarded (`voice.discard`), never played.
 */
export interface VoiceAhead {
  prepare(text: string): void;
  discard(text: string): void;
}

export interface DecisionCall {
  stream: DecisionStream;
  /** The prompt offered WAIT. */
  waitOffered: boolean;
  speculative: boolean;
  /** Cancels the call; its reply is never spoken. */
  drop(): void;
}

export interface DecisionCallsOptions {
  modelTurn: ModelTurn;
  /** The session's signal: its end aborts every call. */
  signal: AbortSignal;
  split?: SplitterOptions;
  maxTokens: number;
  /** Where a speculation's first sentence is synthesised ahead; absent: nothing is. */
  voice?: VoiceAhead;
}

export class DecisionCalls {
  private readonly o: DecisionCallsOptions;
  private speculation: { answer: string; call: DecisionCall; prepared: string | null } | null = null;

  constructor(options: DecisionCallsOptions) {
    this.o = options;
  }

  start(prompt: ChatMessage[], waitOffered: boolean, speculative = false): DecisionCall {
    const dropped = new AbortController();
    const signal = AbortSignal.any([this.o.signal, dropped.signal]);
    const deltas = this.o.modelTurn.stream(prompt, {
      purpose: 'follow_up',
      signal,
      maxTokens: this.o.maxTokens,
      ...(speculative ? { speculative } : {}),
    });
    const stream = streamDecision(deltas, this.o.split, waitOffered);
    return { stream, waitOffered, speculative, drop: () => dropped.abort(new DroppedReply()) };
  }

  /** At a pause: a call on the whole answer so far (`answer`), replacing any earlier speculation. */
  speculate(answer: string, prompt: ChatMessage[], waitOffered: boolean): void {
    this.dropSpeculation();
    const speculation: { answer: string; call: DecisionCall; prepared: string | null } = {
      answer,
      call: this.start(prompt, waitOffered, true),
      prepared: null,
    };
    this.speculation = speculation;
    const voice = this.o.voice;
    if (!voice) return;
    void speculation.call.stream.first.then((sentence) => {
      // Only while it is still the speculation: one dropped (or claimed) meanwhile makes nothing more.
      if (sentence === null || this.speculation !== speculation) return;
      speculation.prepared = sentence;
      voice.prepare(sentence);
    });
  }

  /** The respondent speaks again (or what they said was a backchannel): the words will change. */
  dropSpeculation(): void {
    if (this.speculation) this.drop(this.speculation);
    this.speculation = null;
  }

  private drop(speculation: { call: DecisionCall; prepared: string | null }): void {
    speculation.call.drop();
    if (speculation.prepared !== null) this.o.voice?.discard(speculation.prepared);
  }

  /** The turn ended with the answer `answer`: the speculation if it was on the same words, else null (it is dropped). */
  claim(answer: string): DecisionCall | null {
    const speculation = this.speculation;
    this.speculation = null;
    if (!speculation) return null;
    if (sameWords(speculation.answer, answer)) return speculation.call;
    this.drop(speculation);
    return null;
  }
}

/** Two transcripts say the same words (case, punctuation and spacing aside). */
export function sameWords(a: string, b: string): boolean {
  const words = (s: string) =>
    s
      .toLowerCase()
      .replace(/[^\p{L}\p{N}'\s]/gu, ' ')
      .split(/\s+/)
      .filter(Boolean)
      .join(' ');
  return words(a) === words(b);
}
