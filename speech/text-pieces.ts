/**
 * The text of a speech request cut into the pieces the voice speaks one at a time (docs/speech.md,
 * "Bounds"). The voice's memory grows with the audio one call makes, and the process keeps its
 * peak (measured: 200 characters at speed 1, 10 s of audio, +180 MB; at speed 0.25, 29 s, +900 MB;
 * one unpunctuated 4,096-character sentence took 4.6 GB, 16.9 GB at speed 0.25), so no piece is
 * longer than MAX_PIECE_CHARS at speed 1, and proportionally fewer when slower (about 10 s of audio
 * per call whatever the speed), whatever the punctuation: sentences first, then a long sentence at
 * its last clause mark or space before the limit, and a run without spaces at the limit itself.
 */
export const MAX_PIECE_CHARS = 200;

/** The longest piece at `speed` (0.25-4): the audio of one call stays about what MAX_PIECE_CHARS makes at speed 1. */
export const pieceCharsAt = (speed: number): number => Math.max(40, Math.floor(MAX_PIECE_CHARS * Math.min(1, speed)));

const HAS_WORDS = /[\p{L}\p{N}]/u;

/** Cuts one sentence into pieces of at most `max` code units, preferring clause marks, then spaces. */
function cutLong(sentence: string, max: number): string[] {
  const pieces: string[] = [];
  let rest = sentence;
  while (rest.length > max) {
    const window = rest.slice(0, max + 1);
    const clause = Math.max(window.lastIndexOf(', '), window.lastIndexOf(' - '));
    const space = window.lastIndexOf(' ');
    let at = clause > max / 2 ? clause + 1 : space > 0 ? space : max;
    // Never between the two halves of a surrogate pair.
    if (at === max && /[\uD800-\uDBFF]/.test(rest[at - 1]!)) at--;
    pieces.push(rest.slice(0, at).trim());
    rest = rest.slice(at).trim();
  }
  pieces.push(rest);
  return pieces;
}

export function textPieces(text: string, max = MAX_PIECE_CHARS): string[] {
  return text
    .split(/(?<=[.!?;:])\s+/)
    .flatMap((sentence) => cutLong(sentence.trim(), max))
    .filter((piece) => HAS_WORDS.test(piece));
}
