import { wordCount } from '../../worker/bot/policy/endpointing.ts';
import { planListening } from '../../worker/bot/listening.ts';
import { TURN_POLICY_DEFAULTS, type Endpointing, type TurnPolicy } from '../../worker/bot/policy/turn-policy.ts';
import type { TurnDetectorSettings } from '../../worker/bot/turns/turn-detector.ts';
import { percentile } from '../support.ts';
import type { AnswerItem } from './answer-set.ts';
import { replayItem, type ReplayOptions, type ReplayOutcome, type ReplayRoute, type ReplaySignals } from './replay.ts';

/**
 * The endpointing policy over a range of its settings (issue 40, "the trade-off, measured"): each
 * answer of the set replayed through the real detector in virtual time (replay.ts) on both speech
 * routes, and per setting the talk-overs on thinking pauses against the wait of finished answers.
 * What counts:
 * - a **talk-over**: the turn ended inside a thinking pause (the bot would answer into it; counted
 *   even if the respondent might resume before the bot's first audio);
 * - a finished answer's **decision**: end of speech to the end of the turn; its **wait** (modelled):
 *   the later of the decision and the reply made from the words (`replyMs` after they are in: the
 *   decision call starts on the pause's words, LLM_PREEMPTIVE, and the first sentence's voice is
 *   made during a hold), which the end-to-end sessions of turns.bench.ts measure for real;
 * - answers by length: short (1-5 words), middle (6-7), long (8+), by their text.
 */
export interface SweepPoint {
  label: string;
  endpointing: Endpointing;
}

export interface RouteProfile {
  route: ReplayRoute;
  /** From the words being in to the bot's first audio: the decision call's first token and the voice's first byte. */
  replyMs: number;
}

export interface ItemResult {
  item: AnswerItem;
  outcome: ReplayOutcome;
  talkOver: boolean;
  /** Finished answers: end of speech to the decision, and to the modelled first audio. */
  decisionMs: number | null;
  waitMs: number | null;
}

export interface PointResult {
  label: string;
  route: string;
  items: ItemResult[];
}

/**
 * The detector's settings for an endpointing policy, made by the worker's own plan (worker/bot/
 * listening.ts) from the default policy with this endpointing; no bot audio plays in a replay, so
 * the onset pause is off.
 */
export function detectorSettings(e: Endpointing): TurnDetectorSettings {
  const turns = { ...TURN_POLICY_DEFAULTS, endpointing: e } as TurnPolicy;
  const plan = planListening({ idleTimeoutSeconds: 60, turns }, { vad: null, turn: null });
  return { ...plan.detector, onsetMs: 0 };
}

export type LengthClass = 'short' | 'middle' | 'long';

export function lengthClass(item: AnswerItem): LengthClass {
  const n = wordCount(item.text);
  return n <= 5 ? 'short' : n <= 7 ? 'middle' : 'long';
}

export async function runPoint(
  point: SweepPoint,
  profile: RouteProfile,
  items: AnswerItem[],
  signals: ReplaySignals,
  base: Omit<ReplayOptions, 'settings' | 'wordsWaitMs'>,
): Promise<PointResult> {
  const options: ReplayOptions = { ...base, settings: detectorSettings(point.endpointing), wordsWaitMs: point.endpointing.wordsWaitMs };
  const results: ItemResult[] = [];
  for (const item of items) results.push(scoreItem(item, await replayItem(item, signals, profile.route, options), profile.replyMs));
  return { label: point.label, route: profile.route.name, items: results };
}

/** What one replayed answer counts for (see the top of this file). */
export function scoreItem(item: AnswerItem, outcome: ReplayOutcome, replyMs: number): ItemResult {
  const end = outcome.endAtMs;
  const talkOver = end !== null && item.pauses.some((p) => end > p.startMs && end < p.endMs);
  const finished = item.kind !== 'pause';
  const decisionMs = finished && end !== null ? end - item.speech.endMs : null;
  const wordsReady = outcome.wordsAtMs === null ? null : outcome.wordsAtMs + replyMs;
  const waitMs = finished && end !== null ? Math.max(end, wordsReady ?? end + replyMs) - item.speech.endMs : null;
  return { item, outcome, talkOver, decisionMs, waitMs };
}

export interface PointSummary {
  label: string;
  route: string;
  /** Talk-overs on pauses of at most 2 s: tuning half, held-out half; then pauses over 2 s (all). */
  talkOvers: { tuning: [number, number]; heldOut: [number, number]; over2s: [number, number] };
  /** A finished answer cut before its end (the turn ended inside it). */
  cutShort: number;
  wait: Record<LengthClass, { p50: number; p90: number; n: number }>;
  heldOutWait: Record<LengthClass, { p50: number; p90: number; n: number }>;
}

const stats = (xs: number[]) => ({ p50: percentile(xs, 50), p90: percentile(xs, 90), n: xs.length });
const ratio = (rs: ItemResult[]): [number, number] => [rs.filter((r) => r.talkOver).length, rs.length];
const longest = (item: AnswerItem) => Math.max(0, ...item.pauses.map((p) => p.endMs - p.startMs));

export function summarizePoint(point: PointResult): PointSummary {
  const pauses = point.items.filter((r) => r.item.kind === 'pause');
  const finished = point.items.filter((r) => r.item.kind !== 'pause');
  const waits = (rs: ItemResult[], c: LengthClass) =>
    stats(rs.filter((r) => lengthClass(r.item) === c).map((r) => (r.waitMs === null ? Number.POSITIVE_INFINITY : r.waitMs)));
  const byClass = (rs: ItemResult[]) => ({ short: waits(rs, 'short'), middle: waits(rs, 'middle'), long: waits(rs, 'long') });
  return {
    label: point.label,
    route: point.route,
    talkOvers: {
      tuning: ratio(pauses.filter((r) => !r.item.heldOut && longest(r.item) <= 2000)),
      heldOut: ratio(pauses.filter((r) => r.item.heldOut && longest(r.item) <= 2000)),
      over2s: ratio(pauses.filter((r) => longest(r.item) > 2000)),
    },
    cutShort: finished.filter((r) => r.outcome.endAtMs !== null && r.outcome.endAtMs < r.item.speech.endMs).length,
    wait: byClass(finished),
    heldOutWait: byClass(finished.filter((r) => r.item.heldOut)),
  };
}
