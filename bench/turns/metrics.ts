import type { ItemKind, Span } from './answer-set.ts';

/**
 * Turn-taking measures from one session's timeline, as the respondent saw it (its own clock,
 * performance.now() ms): what the bot did (states, audio, interrupts) against what the respondent
 * said and when. Pure, so the rules are tested on hand-made timelines (metrics.test.ts).
 */
export type BotEventType = 'audio' | 'speaking' | 'listening' | 'thinking' | 'interrupt';

export interface BotEvent {
  at: number;
  type: BotEventType;
}

/** One item the respondent said: when its first and last speech frames went out, and its pauses. */
export interface ItemPlay {
  id: string;
  kind: ItemKind;
  speechStartAt: number;
  speechEndAt: number;
  /** The item's longest thinking pause (0 when it has none). */
  longestPauseMs: number;
  /** In the held-out half of the answer set (answer-set.ts): no setting was tuned on it. */
  heldOut?: boolean;
}

/** A final caption of the bot's (one per utterance): what it said, when the caption arrived. */
export interface BotCaption {
  at: number;
  text: string;
}

/**
 * What the bot did after an answer, told apart by its captions: it spoke the follow-up the
 * language model wrote (`follow_up`), or the next question after the model's NEXT
 * (`next_after_model`), or the next question with no model call (the question's follow-ups used
 * up: the answer was to a follow-up, `next_without_call`).
 */
export type ReplyPath = 'follow_up' | 'next_after_model' | 'next_without_call';
export const REPLY_PATHS: readonly ReplyPath[] = ['follow_up', 'next_after_model', 'next_without_call'];

/** Barge-in: the bot must have sent `interrupt` within this long of the interruption's onset. */
export const BARGE_IN_WINDOW_MS = 1500;
/** Backchannel: an `interrupt` up to this long after it ended is a false stop. */
export const FALSE_STOP_WINDOW_MS = 1500;
/** Backchannel: `thinking` up to this long after it ended means the bot took it as the answer. */
export const TAKEN_AS_TURN_WINDOW_MS = 2500;
/** Pauses up to this long must never end the turn (the aim). */
export const SHORT_PAUSE_MS = 1200;
/** Held-out pauses up to this long must never end the turn (issue 21's aim). */
export const HELD_OUT_PAUSE_AIM_MS = 1500;

export interface Ratio {
  count: number;
  of: number;
}

export interface RunSummary {
  /** End of speech -> first bot audio after it, for plain and short answers the bot did not cut. */
  latencies: number[];
  /** The same latencies by what the bot replied (only when captions and the follow-up text were given). */
  latencyByPath: Record<ReplyPath, number[]>;
  /** Answers where the bot did something (thinking, speaking, audio) before the answer ended. */
  cutIns: { shortPauses: Ratio; allPauses: Ratio; plainAndShort: Ratio };
  /** The same for the pause answers of the held-out half (`shortPauses`: up to HELD_OUT_PAUSE_AIM_MS). */
  heldOutCutIns: { shortPauses: Ratio; allPauses: Ratio };
  /** Pause answers the bot spoke into (audio before the answer ended), not just showed `thinking`. */
  audibleCutIns: Ratio;
  /** Interruption onset -> `interrupt` received. */
  stopTimes: number[];
  missedBargeIns: Ratio;
  /** Backchannels followed by an `interrupt`: the bot paused (BARGE_IN_MODE=pause) or stopped its voice. */
  falseStops: Ratio;
  /**
   * Backchannels after whose `interrupt` the bot's voice never came back before it went `thinking`
   * or `listening`: stopped for good (issue 21's aim: none). A voice that comes back, resumed or
   * started over, is not counted here.
   */
  stoppedForGood: Ratio;
  backchannelsTakenAsTurn: Ratio;
  /** Which items: answers cut in on, interruptions missed, backchannels that stopped the bot, and those that stopped it for good. */
  ids: { cutIn: string[]; missed: string[]; falseStop: string[]; stoppedForGood: string[]; stops: string[] };
}

const ACTIVITY: ReadonlySet<BotEventType> = new Set(['audio', 'speaking', 'thinking', 'interrupt']);

const first = (
  events: readonly BotEvent[],
  type: BotEventType | ReadonlySet<BotEventType>,
  after: number,
  before: number,
): BotEvent | undefined =>
  events.find((e) => e.at > after && e.at < before && (typeof type === 'string' ? e.type === type : type.has(e.type)));

const ratio = (flags: boolean[]): Ratio => ({ count: flags.filter(Boolean).length, of: flags.length });

export interface SummarizeOptions {
  /** The bot's final captions, and the follow-up text the stand-in writes: latencies by path. */
  captions?: readonly BotCaption[];
  followUpText?: string;
}

export function summarize(plays: readonly ItemPlay[], events: readonly BotEvent[], options: SummarizeOptions = {}): RunSummary {
  const sorted = [...events].sort((a, b) => a.at - b.at);
  const captions = [...(options.captions ?? [])].sort((a, b) => a.at - b.at);
  const isFollowUp = (c: BotCaption | undefined): boolean =>
    c !== undefined && options.followUpText !== undefined && c.text.trim().startsWith(options.followUpText);
  const answers = plays.filter((p) => p.kind === 'plain' || p.kind === 'pause' || p.kind === 'short');
  const cutIn = new Map(answers.map((p) => [p, first(sorted, ACTIVITY, p.speechStartAt, p.speechEndAt) !== undefined]));
  const latencies: number[] = [];
  const latencyByPath: Record<ReplyPath, number[]> = { follow_up: [], next_after_model: [], next_without_call: [] };
  for (const p of answers) {
    if (p.kind === 'pause' || cutIn.get(p)) continue;
    // The reply belongs to this answer only if it comes before the respondent's next item.
    const next = plays.find((q) => q.speechStartAt > p.speechEndAt);
    const before = next?.speechStartAt ?? Infinity;
    const audio = first(sorted, 'audio', p.speechEndAt, before);
    if (!audio) continue;
    latencies.push(audio.at - p.speechEndAt);
    if (options.followUpText === undefined) continue;
    const reply = captions.find((c) => c.at > p.speechEndAt && c.at < before);
    if (!reply) continue;
    const asked = captions.filter((c) => c.at < p.speechStartAt).at(-1);
    const path: ReplyPath = isFollowUp(reply) ? 'follow_up' : isFollowUp(asked) ? 'next_without_call' : 'next_after_model';
    latencyByPath[path].push(audio.at - p.speechEndAt);
  }
  const paused = answers.filter((p) => p.kind === 'pause' && !p.heldOut);
  const heldOut = answers.filter((p) => p.kind === 'pause' && p.heldOut);
  const interruptions = plays.filter((p) => p.kind === 'interruption');
  const stops = interruptions.map((p) => first(sorted, 'interrupt', p.speechStartAt - 1, p.speechStartAt + BARGE_IN_WINDOW_MS));
  const backchannels = plays.filter((p) => p.kind === 'backchannel');
  const stopsOnBackchannel = backchannels.map((p) => first(sorted, 'interrupt', p.speechStartAt - 1, p.speechEndAt + FALSE_STOP_WINDOW_MS));
  const falseStop = stopsOnBackchannel.map((e) => e !== undefined);
  const forGood = stopsOnBackchannel.map((stop, i) => {
    if (!stop) return false;
    // The voice is back if audio arrives after the interrupt and after the backchannel, before the bot takes a turn or listens.
    const from = Math.max(stop.at, backchannels[i]!.speechEndAt);
    const turn = sorted.find((e) => e.at > from && (e.type === 'thinking' || e.type === 'listening'));
    return first(sorted, 'audio', from, turn?.at ?? Infinity) === undefined;
  });
  return {
    latencies,
    latencyByPath,
    heldOutCutIns: {
      shortPauses: ratio(heldOut.filter((p) => p.longestPauseMs <= HELD_OUT_PAUSE_AIM_MS).map((p) => cutIn.get(p)!)),
      allPauses: ratio(heldOut.map((p) => cutIn.get(p)!)),
    },
    cutIns: {
      shortPauses: ratio(paused.filter((p) => p.longestPauseMs <= SHORT_PAUSE_MS).map((p) => cutIn.get(p)!)),
      allPauses: ratio(paused.map((p) => cutIn.get(p)!)),
      plainAndShort: ratio(answers.filter((p) => p.kind !== 'pause').map((p) => cutIn.get(p)!)),
    },
    audibleCutIns: ratio([...paused, ...heldOut].map((p) => first(sorted, 'audio', p.speechStartAt, p.speechEndAt) !== undefined)),
    stopTimes: stops.flatMap((e, i) => (e ? [e.at - interruptions[i]!.speechStartAt] : [])),
    missedBargeIns: ratio(stops.map((e) => e === undefined)),
    falseStops: ratio(falseStop),
    stoppedForGood: ratio(forGood),
    backchannelsTakenAsTurn: ratio(
      backchannels.map((p) => first(sorted, 'thinking', p.speechStartAt - 1, p.speechEndAt + TAKEN_AS_TURN_WINDOW_MS) !== undefined),
    ),
    ids: {
      cutIn: answers.filter((p) => cutIn.get(p)).map((p) => p.id),
      missed: interruptions.filter((_, i) => stops[i] === undefined).map((p) => p.id),
      stops: interruptions.flatMap((p, i) => (stops[i] ? [`${p.id} ${Math.round(stops[i].at - p.speechStartAt)} ms`] : [])),
      falseStop: backchannels.filter((_, i) => falseStop[i]).map((p) => p.id),
      stoppedForGood: backchannels.filter((_, i) => forGood[i]).map((p) => p.id),
    },
  };
}

/** The longest pause of an item, for ItemPlay. */
export const longestPause = (pauses: readonly Span[]): number => Math.max(0, ...pauses.map((p) => p.endMs - p.startMs));
