/**
 * Guards around one Moonshine decode (facts in the shared TESTING notes): Moonshine can repeat its
 * last words until the decoder's limit on a short answer, so the text is cut at a length the audio
 * can hold (Moonshine's own guidance: about 6.5 tokens per second of audio); and very short
 * segments can come back empty, so they are padded with silence to a second.
 */
export const RECOGNISER_RATE = 16_000;
export const TOKENS_PER_SECOND = 6.5;
/** Headroom for a fast talker and the sentence-final period. */
const EXTRA_TOKENS = 4;
export const MIN_DECODE_SECONDS = 1;

export function maxTokens(audioSeconds: number): number {
  return Math.ceil(audioSeconds * TOKENS_PER_SECOND) + EXTRA_TOKENS;
}

/** Centres samples shorter than MIN_DECODE_SECONDS in silence; longer ones are returned as they are. */
export function padShort(samples: Float32Array, sampleRate = RECOGNISER_RATE): Float32Array {
  const want = Math.round(MIN_DECODE_SECONDS * sampleRate);
  if (samples.length >= want) return samples;
  const out = new Float32Array(want);
  out.set(samples, Math.floor((want - samples.length) / 2));
  return out;
}

/**
 * A runaway decode repeats a phrase until it is stopped ("Nothing really it was easy nothing really
 * it was easy nothing ..."): the tokens up to the end of the phrase's first appearance, when the
 * tokens from some point on are that phrase again and again (at least twice, compared without case
 * or spaces); otherwise all of them.
 */
export function withoutRepeats(tokens: readonly string[]): readonly string[] {
  const norm = tokens.map((t) => t.trim().toLowerCase());
  let best = tokens.length;
  for (let period = 1; period * 2 <= norm.length; period++) {
    // The earliest start from which every token equals the one a period later.
    let start = norm.length - period;
    while (start > 0 && norm[start - 1] === norm[start - 1 + period]) start--;
    if (norm.length - start >= 2 * period) best = Math.min(best, start + period);
  }
  return tokens.slice(0, best);
}

/**
 * The decoded text, cut to what `audioSeconds` of speech can hold. `tokens` are the decoder's
 * pieces in order (each carries its own leading space), `text` its joined result. Only a decode
 * that ran past that length is touched: its repeated tail is dropped, then it is cut to the length.
 */
export function boundedText(
  result: { text: string; tokens: readonly string[] },
  audioSeconds: number,
): { text: string; truncated: boolean } {
  const limit = maxTokens(audioSeconds);
  if (result.tokens.length <= limit) return { text: result.text.trim(), truncated: false };
  return { text: withoutRepeats(result.tokens).slice(0, limit).join('').trim(), truncated: true };
}
