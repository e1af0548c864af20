/**
 * Cuts a realtime buffer into pieces at the respondent's pauses while it is still being appended,
 * so that each closed piece can be decoded before the commit (speech/realtime-buffer.ts). Moonshine is
 * an offline model: a cut inside a word costs words, so a piece closes only at a real pause (a run
 * of quiet frames at least `pauseMs` long, longer than the closures inside words: about 100 ms seen
 * in the Piper voice), never before `minPieceMs`, and is forced (at the quietest frame of its last
 * seconds) only past `maxPieceMs`. Quiet is judged per 20 ms frame against the buffer's own levels
 * (a noise floor that follows the quietest frames, and the loudest speech), so that a noisy line
 * and a clean one split alike. After a cut (or a commit of speech), silence longer than a short
 * lead-in before the next speech is dropped instead of decoded. Pure: bytes in, pieces out, no clock.
 *
 * With `earlyMs`, it also says when the open piece's speech has been followed by that much quiet
 * (an `early` tail: the piece as it stands), once per such quiet, and when speech comes back after
 * one (`resumed`): a client commits at its own pause (the bot at 224 ms of silence), so a decode
 * started after `earlyMs` of quiet (120 by default) is that much nearer done at the commit, and is
 * thrown away if the respondent goes on (realtime-buffer.ts).
 */
export interface SplitOptions {
  /** Sample rate of the PCM16 (mono, little-endian) given to push(). */
  rate: number;
  pauseMs: number;
  minPieceMs: number;
  maxPieceMs: number;
  /** Quiet after speech that offers the open piece as an early tail; 0 or absent: never. */
  earlyMs?: number;
}

/** What one push() heard, in order: pieces closed at pauses, and early tails (see above). */
export type SplitEvent = { type: 'piece'; pcm: Buffer } | { type: 'early'; pcm: Buffer } | { type: 'resumed' };

const FRAME_MS = 20;
/** A frame is quiet below floor + this... */
const ABOVE_FLOOR_DB = 9;
/** ...or below the loudest speech minus this, whichever is higher. */
const BELOW_PEAK_DB = 35;
/** The floor creeps up this much per frame, so that it follows a noise that grows louder... */
const FLOOR_RISE_DB = 0.02;
/** ...and the peak sinks, so that one loud click does not make later speech count as quiet. */
const PEAK_FALL_DB = 0.01;
/** Silence kept before the next piece's first speech, and at the end of a closed piece. */
const KEEP_MS = 100;
/** A forced cut looks for the quietest frame among the piece's last this many ms. */
const FORCED_CUT_WINDOW_MS = 2000;

export class PauseSplitter {
  private readonly frameBytes: number;
  private readonly pauseFrames: number;
  private readonly minPieceFrames: number;
  private readonly maxPieceFrames: number;
  private readonly keepFrames = KEEP_MS / FRAME_MS;
  /** The open piece: whole frames and their levels (dBFS); then a partial frame. */
  private frames: Buffer[] = [];
  private levels: number[] = [];
  private carry: Buffer = Buffer.alloc(0);
  /** The loudest frame of the open piece: it holds speech when that is above the quiet line. */
  private pieceMax = Number.NEGATIVE_INFINITY;
  private floor = Number.POSITIVE_INFINITY;
  private peak = Number.NEGATIVE_INFINITY;
  /**
   * Speech has been heard and ended (a piece closed at a pause, or a buffer with speech committed):
   * the levels are known, so the quiet before the next piece's first speech is trimmed to a short
   * lead-in. Before, a buffer committed after a long pause started with all of that pause (1.5-2 s
   * of silence before the words), and the recogniser read it, with no quiet after the words, as
   * nothing at all: the words were lost (issue 40's bench: a client that commits at the end of the
   * speech, a turn cut at its bound).
   */
  private speechHeard = false;
  private readonly earlyFrames: number;
  /** An early tail was offered for the open piece and no speech came after it. */
  private earlyOffered = false;
  private events: SplitEvent[] = [];

  constructor(options: SplitOptions) {
    this.frameBytes = Math.round((options.rate * FRAME_MS) / 1000) * 2;
    this.pauseFrames = Math.max(1, Math.round(options.pauseMs / FRAME_MS));
    this.minPieceFrames = Math.round(options.minPieceMs / FRAME_MS);
    this.maxPieceFrames = Math.max(this.minPieceFrames + 1, Math.round(options.maxPieceMs / FRAME_MS));
    this.earlyFrames = options.earlyMs ? Math.max(1, Math.round(options.earlyMs / FRAME_MS)) : 0;
  }

  /** Appends audio; returns the pieces it closed, in order (each PCM16 at the same rate). */
  push(pcm: Buffer): Buffer[] {
    return this.pushEvents(pcm).flatMap((e) => (e.type === 'piece' ? [e.pcm] : []));
  }

  /** Appends audio; returns the pieces it closed and the early tails it offered, in order. */
  pushEvents(pcm: Buffer): SplitEvent[] {
    this.events = [];
    const data = this.carry.length > 0 ? Buffer.concat([this.carry, pcm]) : pcm;
    let offset = 0;
    for (; offset + this.frameBytes <= data.length; offset += this.frameBytes) {
      const piece = this.addFrame(data.subarray(offset, offset + this.frameBytes));
      if (piece) this.events.push({ type: 'piece', pcm: piece });
      else this.offerEarly();
    }
    this.carry = Buffer.from(data.subarray(offset)); // a copy: the caller's buffer is not held
    return this.events;
  }

  /** The open piece at the commit, and whether it holds speech. Starts the next buffer (the levels are kept). */
  finish(): { tail: Buffer; speech: boolean } {
    const tail = Buffer.concat([...this.frames, this.carry]);
    const speech = this.pieceMax >= this.quietLine();
    if (speech) this.speechHeard = true;
    this.frames = [];
    this.levels = [];
    this.carry = Buffer.alloc(0);
    this.pieceMax = Number.NEGATIVE_INFINITY;
    this.earlyOffered = false;
    return { tail, speech };
  }

  /** The open piece's speech has been followed by `earlyMs` of quiet: offer it, once. */
  private offerEarly(): void {
    if (this.earlyFrames === 0 || this.earlyOffered) return;
    const line = this.quietLine();
    if (this.pieceMax < line || this.quietRun(line, this.earlyFrames) < this.earlyFrames) return;
    this.earlyOffered = true;
    this.events.push({ type: 'early', pcm: Buffer.concat(this.frames) });
  }

  /** Frames below this are quiet. Judged now, not when each frame came: the floor is only known once a pause was heard. */
  private quietLine(): number {
    return Math.max(this.floor + ABOVE_FLOOR_DB, this.peak - BELOW_PEAK_DB);
  }

  private addFrame(frame: Buffer): Buffer | null {
    const level = levelDb(frame);
    this.floor = Math.min(level, this.floor + FLOOR_RISE_DB);
    this.peak = Math.max(level, this.peak - PEAK_FALL_DB);
    this.frames.push(Buffer.from(frame));
    this.levels.push(level);
    this.pieceMax = Math.max(this.pieceMax, level);
    const line = this.quietLine();
    if (this.earlyOffered && level >= line) {
      // Speech again after an early tail: the tail no longer ends the piece.
      this.earlyOffered = false;
      this.events.push({ type: 'resumed' });
    }
    if (this.pieceMax < line) {
      // Before the first speech after a cut, only a short lead-in of silence is worth decoding.
      if (this.speechHeard && this.frames.length > this.keepFrames) this.dropFront(this.frames.length - this.keepFrames);
      return null;
    }
    if (this.frames.length >= this.minPieceFrames && this.quietRun(line, this.pauseFrames) >= this.pauseFrames) {
      // Keep a little of the pause at the end of the piece; the rest starts the next one.
      const run = this.quietRun(line, this.frames.length);
      if (run < this.frames.length) return this.cut(this.frames.length - run + Math.min(this.keepFrames, run));
    }
    if (this.frames.length >= this.maxPieceFrames) return this.cut(this.quietestRecentFrame() + 1);
    return null;
  }

  /** Quiet frames at the end of the open piece, counted up to `limit`. */
  private quietRun(line: number, limit: number): number {
    let run = 0;
    while (run < limit && run < this.levels.length && this.levels[this.levels.length - 1 - run]! < line) run++;
    return run;
  }

  private quietestRecentFrame(): number {
    const from = Math.max(this.minPieceFrames, this.frames.length - FORCED_CUT_WINDOW_MS / FRAME_MS);
    let best = this.frames.length - 1;
    for (let i = this.frames.length - 1; i >= from; i--) if (this.levels[i]! < this.levels[best]!) best = i;
    return best;
  }

  private cut(at: number): Buffer {
    const piece = Buffer.concat(this.frames.slice(0, at));
    this.dropFront(at);
    this.speechHeard = true;
    // An early tail offered with no speech since is this piece (up to quiet frames): the caller
    // decodes it once. What is left opens a new piece.
    this.earlyOffered = false;
    return piece;
  }

  private dropFront(n: number): void {
    this.frames.splice(0, n);
    this.levels.splice(0, n);
    this.pieceMax = this.levels.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY);
  }
}

/** Mean power of a PCM16 frame in dB relative to full scale (-100 for digital silence). */
export function levelDb(frame: Buffer): number {
  let sum = 0;
  const n = frame.length >> 1;
  for (let i = 0; i < n; i++) {
    const v = frame.readInt16LE(i * 2) / 32768;
    sum += v * v;
  }
  return 10 * Math.log10(sum / Math.max(1, n) + 1e-10);
}
