import { describe, expect, it } from 'vitest';
import { PauseSplitter } from './pause-splitter.ts';

const RATE = 24_000;
const OPTIONS = { rate: RATE, pauseMs: 200, minPieceMs: 1000, maxPieceMs: 8000 };

/** A fixed-seed signal: `sound` segments are a 220 Hz tone with a little noise, `quiet` ones noise only, `noiseDb` below full scale. */
function signal(parts: Array<['sound' | 'quiet', number]>, noiseDb = -70): Buffer {
  const out: number[] = [];
  let seed = 7;
  const noise = 10 ** (noiseDb / 20) * Math.sqrt(3);
  for (const [kind, ms] of parts) {
    for (let i = 0; i < (RATE * ms) / 1000; i++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      const n = ((seed / 0x7fffffff) * 2 - 1) * noise;
      out.push((kind === 'sound' ? 0.3 * Math.sin((2 * Math.PI * 220 * out.length) / RATE) : 0) + n);
    }
  }
  const pcm = Buffer.alloc(out.length * 2);
  out.forEach((v, i) => pcm.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(v * 32767))), i * 2));
  return pcm;
}

const ms = (pcm: Buffer) => (pcm.length / 2 / RATE) * 1000;

/** Feeds the signal in 20 ms appends, as the bot's client does, and collects what was cut. */
function split(pcm: Buffer, options = OPTIONS) {
  const splitter = new PauseSplitter(options);
  const pieces: Buffer[] = [];
  for (let i = 0; i < pcm.length; i += 960) pieces.push(...splitter.push(pcm.subarray(i, i + 960)));
  return { pieces, ...splitter.finish() };
}

describe('PauseSplitter', () => {
  it('trims a long pause at the start of the buffer after a commit to a short lead-in (the words after it were lost)', () => {
    // A commit at a pause, then 1.8 s more of the pause and the next sentence, committed at its
    // last word: the recogniser read 1.8 s of silence and the words with no quiet after them as
    // nothing (the turn bench's self-hosted words, 2026-11-29).
    const splitter = new PauseSplitter({ ...OPTIONS, earlyMs: 120 });
    const feed = (pcm: Buffer) => {
      for (let i = 0; i < pcm.length; i += 960) splitter.pushEvents(pcm.subarray(i, i + 960));
    };
    feed(
      signal([
        ['sound', 1100],
        ['quiet', 250],
      ]),
    );
    splitter.finish();
    feed(
      signal([
        ['quiet', 1800],
        ['sound', 1200],
      ]),
    );
    const { tail, speech } = splitter.finish();
    expect(speech).toBe(true);
    expect(ms(tail)).toBeGreaterThanOrEqual(1200);
    expect(ms(tail)).toBeLessThanOrEqual(1200 + 120);
  });

  it('keeps the quiet at the start of the first buffer of a stream (its levels are not known yet)', () => {
    const { tail } = split(
      signal([
        ['quiet', 600],
        ['sound', 500],
      ]),
    );
    expect(ms(tail)).toBeCloseTo(1100, -1);
  });

  it('offers the open piece early at the first quiet after its speech, once, and says when speech comes back', () => {
    const splitter = new PauseSplitter({ ...OPTIONS, earlyMs: 120 });
    const pcm = signal([
      ['sound', 600],
      ['quiet', 160],
      ['sound', 660],
      ['quiet', 400],
    ]);
    const events = [];
    for (let i = 0; i < pcm.length; i += 960) events.push(...splitter.pushEvents(pcm.subarray(i, i + 960)));
    expect(events.map((e) => e.type)).toEqual(['early', 'resumed', 'early', 'piece']);
    const lengths = events.map((e) => ('pcm' in e ? ms(e.pcm) : 0));
    // The first early tail is the speech so far and 120 ms of quiet; the second the whole piece so
    // far; the piece closed at 200 ms of quiet is that speech with 100 ms of its pause.
    expect(lengths).toEqual([600 + 120, 0, 600 + 160 + 660 + 120, 600 + 160 + 660 + 100]);
    expect(splitter.finish().speech).toBe(false);
  });

  it('offers a short answer that no pause may cut (under the minimum piece) early too, and silence alone never', () => {
    const splitter = new PauseSplitter({ ...OPTIONS, earlyMs: 120 });
    const quietFirst = splitter.pushEvents(signal([['quiet', 100]]));
    expect(quietFirst).toEqual([]);
    const events = splitter.pushEvents(
      signal([
        ['sound', 500],
        ['quiet', 300],
      ]),
    );
    expect(events.map((e) => e.type)).toEqual(['early']);
    expect(
      new PauseSplitter(OPTIONS).pushEvents(
        signal([
          ['sound', 500],
          ['quiet', 300],
        ]),
      ),
    ).toEqual([]);
  });

  it('cuts at pauses of 200 ms or more, keeps a little of each pause, and drops a long silence before the next speech', () => {
    const { pieces, tail, speech } = split(
      signal([
        ['sound', 1500],
        ['quiet', 600],
        ['sound', 1200],
        ['quiet', 2000],
        ['sound', 1400],
        ['quiet', 100],
      ]),
    );
    // Each pause: 100 ms ends a piece, 100 ms leads into the next one, the rest is never decoded.
    expect(pieces.map(ms)).toEqual([1500 + 100, 100 + 1200 + 100]);
    expect(ms(tail)).toBe(100 + 1400 + 100);
    expect(speech).toBe(true);
  });

  it('does not cut at gaps shorter than the pause (the closures inside words), nor pieces under the minimum', () => {
    const gaps = split(
      signal([
        ['sound', 900],
        ['quiet', 120],
        ['sound', 900],
        ['quiet', 160],
        ['sound', 900],
      ]),
    );
    expect(gaps.pieces).toHaveLength(0);
    expect(ms(gaps.tail)).toBe(2980);
    const short = split(
      signal([
        ['sound', 500],
        ['quiet', 400],
        ['sound', 1000],
      ]),
    );
    expect(short.pieces).toHaveLength(0);
  });

  it('finds the same pauses under noise at about 15 dB below the speech', () => {
    const { pieces } = split(
      signal(
        [
          ['sound', 1500],
          ['quiet', 600],
          ['sound', 1200],
          ['quiet', 600],
          ['sound', 1000],
        ],
        -28,
      ),
    );
    expect(pieces.map(ms)).toEqual([1500 + 100, 100 + 1200 + 100]);
  });

  it('cuts a piece with no pause at its quietest moment once it is past the maximum', () => {
    const { pieces } = split(
      signal([
        ['sound', 5000],
        ['quiet', 60],
        ['sound', 5000],
      ]),
      { ...OPTIONS, maxPieceMs: 6000 },
    );
    expect(pieces).toHaveLength(1);
    expect(ms(pieces[0]!)).toBeGreaterThan(5000);
    expect(ms(pieces[0]!)).toBeLessThanOrEqual(5060);
  });

  it('a tail of silence after a cut holds no speech; partial frames are carried to the next append', () => {
    const pcm = signal([
      ['sound', 1500],
      ['quiet', 900],
    ]);
    const splitter = new PauseSplitter(OPTIONS);
    const pieces: Buffer[] = [];
    // Odd sizes: frames straddle appends.
    for (let i = 0; i < pcm.length; i += 1234) pieces.push(...splitter.push(pcm.subarray(i, i + 1234)));
    expect(pieces.map(ms)).toEqual([1600]);
    const { tail, speech } = splitter.finish();
    expect(speech).toBe(false);
    expect(ms(tail)).toBeLessThanOrEqual(120);
    expect(pieces[0]!.equals(pcm.subarray(0, pieces[0]!.length))).toBe(true);
  });
});
