/**
 * Where a turn's wait went (issue 40), from the bot's own spans: from the end of the answer's
 * speech to the bot's next audio, the part spent deciding the turn had ended (`turn.end`), waiting
 * for the final words after it (`stt.final`), waiting for the language model's first token after
 * the words (0 when a call started at a pause had it ready), and the rest: the voice's first audio
 * and its way to the respondent. For `npm run demo`.
 */
export interface SpanTimes {
  name: string;
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
}

export interface TurnWait {
  totalMs: number;
  decisionMs: number;
  wordsMs: number;
  modelMs: number;
  voiceMs: number;
}

/** One breakdown per answer with a measured latency (`latencies`, from the respondent's side), in order. */
export function turnWaits(spans: SpanTimes[], latencies: number[]): Array<TurnWait | null> {
  const byStart = (name: string) => spans.filter((s) => s.name === name).sort((a, b) => a.startMs - b.startMs);
  const ends = byStart('turn.end');
  const finals = byStart('stt.final');
  const calls = byStart('llm.turn').filter((s) => s.attributes['llm.purpose'] === 'follow_up' && s.attributes['llm.dropped'] !== true);
  return latencies.map((totalMs, i) => {
    const end = ends[i];
    const final = finals[i];
    if (!end || !final || Number.isNaN(totalMs)) return null;
    const decisionMs = end.endMs - end.startMs;
    const wordsMs = Math.max(0, final.endMs - final.startMs);
    // The call kept for this answer: the first one still running, or started, when the turn ended.
    const call = calls.find((c) => c.endMs >= end.endMs);
    const firstToken = call
      ? call.startMs + Number(call.attributes['llm.time_to_first_token_ms'] ?? call.endMs - call.startMs)
      : final.endMs;
    const modelMs = Math.max(0, firstToken - final.endMs);
    return { totalMs, decisionMs, wordsMs, modelMs, voiceMs: Math.max(0, totalMs - decisionMs - wordsMs - modelMs) };
  });
}

export function describeWait(w: TurnWait): string {
  const r = (ms: number) => ms.toFixed(0);
  return (
    `${r(w.totalMs)} ms = decision ${r(w.decisionMs)} + words ${r(w.wordsMs)} + model ${r(w.modelMs)} + voice ` +
    `${r(w.voiceMs)} (the voice's part is what is left: first audio and transport)`
  );
}
