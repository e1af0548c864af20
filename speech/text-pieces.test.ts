import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_PIECE_CHARS, pieceCharsAt, textPieces } from './text-pieces.ts';

describe('textPieces', () => {
  it('keeps short sentences whole, one piece each', () => {
    expect(textPieces('Hello there. How are you?  Fine; thanks!')).toEqual(['Hello there.', 'How are you?', 'Fine;', 'thanks!']);
  });

  it('cuts a sentence without punctuation at spaces, every piece within the limit', () => {
    const words = Array.from({ length: 700 }, (_, i) => `word${i}`).join(' ');
    const pieces = textPieces(words);
    expect(pieces.every((p) => p.length <= MAX_PIECE_CHARS)).toBe(true);
    expect(pieces.join(' ')).toBe(words);
  });

  it('prefers a clause mark to a space when one is in the second half', () => {
    const text = `${'a '.repeat(70)}end of clause, ${'b '.repeat(60)}`.trim();
    expect(textPieces(text)[0]!.endsWith('clause,')).toBe(true);
  });

  it('cuts a run with no spaces at the limit, never inside a surrogate pair', () => {
    expect(textPieces('x'.repeat(4096)).map((p) => p.length)).toEqual([...Array(20).fill(200), 96]);
    const emoji = `a${'𝒜'.repeat(150)}`; // a letter outside the BMP: two code units
    const pieces = textPieces(emoji);
    expect(pieces.join('')).toBe(emoji);
    expect(pieces.every((p) => !/[\uD800-\uDBFF]$/.test(p))).toBe(true);
  });

  it('slower speech gets shorter pieces, so that one call makes about the same audio', () => {
    expect([0.25, 0.5, 1, 2, 4].map(pieceCharsAt)).toEqual([50, 100, 200, 200, 200]);
    expect(textPieces('word '.repeat(100), pieceCharsAt(0.25)).every((p) => p.length <= 50)).toBe(true);
  });

  it('property: no piece is over the limit, and the pieces hold every word in order', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', 'b', ' ', '.', ',', '!', '\n', 'é'), maxLength: 2000 }), (text) => {
        const pieces = textPieces(text);
        expect(pieces.every((p) => p.length <= MAX_PIECE_CHARS)).toBe(true);
        const letters = (t: string) => t.replace(/[^\p{L}\p{N}]/gu, '');
        expect(letters(pieces.join(''))).toBe(letters(text));
      }),
    );
  });
});
