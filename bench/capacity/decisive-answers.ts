import type { AnswerItem } from '../turns/answer-set.ts';
import { loadSmartTurn } from '../../worker/bot/turns/smart-turn.ts';
import { resolveTurnModels } from '../../worker/bot/turns/models.ts';

/**
 * The answers the capacity bench speaks: those whose end the end-of-turn model recognises with a
 * margin. An answer near the model's threshold is decided one way or the other by a few
 * milliseconds of frame alignment, and a "not finished" costs a re-ask (400 ms): at 24 turns per
 * step, one or two such flips moved the p95 by 30 % between runs of the same pod, which is larger
 * than any load effect the bench looks for (docs/benchmarks.md, "Capacity"). Which answers the model
 * hesitates on is the turn bench's subject (bench/turns.bench.ts), not a pod's capacity.
 *
 * Scored offline with the same model file the bots load, on the answer followed by the silence
 * the bot has heard when it asks at the commit point (TURN_MODEL_SILENCE_MS, 200 ms) and a little
 * after it (300 ms, for a late frame). Deterministic: the same audio gives the same scores.
 */
export const DECISIVE_PROBABILITY = 0.8;
const TAILS_MS = [200, 300] as const;
const SAMPLE_RATE = 16_000;

export interface ScoredAnswer {
  item: AnswerItem;
  /** The model's probability of "finished" after each of TAILS_MS of silence. */
  scores: number[];
  decisive: boolean;
}

export async function scoreAnswers(items: readonly AnswerItem[], modelsDir: string): Promise<ScoredAnswer[]> {
  const model = await loadSmartTurn(resolveTurnModels(modelsDir).smartTurn);
  const out: ScoredAnswer[] = [];
  for (const item of items) {
    const scores: number[] = [];
    for (const tail of TAILS_MS) {
      const pcm = Buffer.concat([item.pcm, Buffer.alloc(((tail * SAMPLE_RATE) / 1000) * 2)]);
      scores.push(await model.completion(new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length / 2)));
    }
    out.push({ item, scores, decisive: scores.every((p) => p >= DECISIVE_PROBABILITY) });
  }
  return out;
}

/** One line for the bench's output: which answers were kept, with their scores. */
export function describeScores(scored: readonly ScoredAnswer[]): string {
  const fmt = (s: ScoredAnswer) => `${s.item.id} ${s.scores.map((p) => p.toFixed(2)).join('/')}`;
  return (
    `answers spoken: the plain answers the end-of-turn model calls finished with p >= ${DECISIVE_PROBABILITY} after ` +
    `${TAILS_MS.join(' and ')} ms of silence (${scored
      .filter((s) => s.decisive)
      .map(fmt)
      .join(', ')}); left out: ${
      scored
        .filter((s) => !s.decisive)
        .map(fmt)
        .join(', ') || 'none'
    }`
  );
}
