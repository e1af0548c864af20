/**
 * Sentences out of text that arrives in pieces (a language model's stream), each as soon as it is
 * complete, so the first one can be spoken while the rest is still being written. A sentence ends
 * at . ! ? or … followed by a space (so "3.5" and "e.g.x" do not split); very short pieces ("Ok.")
 * are kept with the next one, since one text-to-speech call per word costs more than it saves.
 *
 * Two options speed up a streamed reply (issue 21), both off for a whole text:
 * - `eagerEnd`: a ? ! or … that ends the text written so far ends a sentence at once, without
 *   waiting for the next token's space (or for the stream's end, which a provider may send late).
 *   A full stop is not eager: "3." may be followed by "5".
 * - `firstClauseWords`: the reply's first clause goes out alone when it has at least this many words
 *   and ends at a comma, semicolon, colon or dash ("When your manager stepped in,"), so speech
 *   starts before the first sentence is written; 0 turns it off. Only the first: later sentences
 *   are synthesised while the first plays, and whole sentences sound better.
 */
const END = /[.!?…]+["'”’)\]]*\s+/g;
const EAGER_END = /[!?…]+["'”’)\]]*$/;
/** A clause break: not a thousands separator ("1,000"). */
const CLAUSE = /(?<!\d)[,;:—–](?=\s|$)|\s-(?=\s)/g;
/** Punctuation left over from an eager end ("?" then "!" in the next piece) is dropped. */
const LEFTOVER = /^[.!?…"'”’)\]]+/;
const MIN_CHARS = 12;

export interface SplitterOptions {
  eagerEnd?: boolean;
  firstClauseWords?: number;
}

export class SentenceSplitter {
  private buffer = '';
  private emitted = 0;
  private cutEagerly = false;
  private readonly eagerEnd: boolean;
  private readonly firstClauseWords: number;

  constructor(options: SplitterOptions = {}) {
    this.eagerEnd = options.eagerEnd ?? false;
    this.firstClauseWords = options.firstClauseWords ?? 0;
  }

  /** Adds text; returns the sentences it completed. */
  push(text: string): string[] {
    if (this.cutEagerly && this.buffer === '') text = text.replace(LEFTOVER, '');
    this.cutEagerly = false;
    this.buffer += text;
    const out: string[] = [];
    if (this.emitted === 0 && this.firstClauseWords > 0) out.push(...this.firstClause());
    let start = 0;
    END.lastIndex = 0;
    for (let m = END.exec(this.buffer); m; m = END.exec(this.buffer)) {
      const end = m.index + m[0].length;
      const sentence = this.buffer.slice(start, end).trim();
      if (sentence.length < MIN_CHARS) continue;
      out.push(sentence);
      start = end;
    }
    this.buffer = this.buffer.slice(start);
    const rest = this.buffer.trim();
    if (this.eagerEnd && rest.length >= MIN_CHARS && EAGER_END.test(rest)) {
      out.push(rest);
      this.buffer = '';
      this.cutEagerly = true;
    }
    this.emitted += out.length;
    return out;
  }

  /** The text left when the stream ends. */
  flush(): string[] {
    const rest = this.buffer.trim();
    this.buffer = '';
    return rest ? [rest] : [];
  }

  /** The first clause, when it is long enough and no sentence end comes before it. */
  private firstClause(): string[] {
    CLAUSE.lastIndex = 0;
    for (let m = CLAUSE.exec(this.buffer); m; m = CLAUSE.exec(this.buffer)) {
      const head = this.buffer.slice(0, m.index + m[0].length);
      END.lastIndex = 0;
      if (END.test(head)) return [];
      const clause = head.trim();
      if (clause.split(/\s+/).length < this.firstClauseWords) continue;
      this.buffer = this.buffer.slice(head.length);
      return [clause];
    }
    return [];
  }
}

/** Splits a whole text into sentences. */
export function splitSentences(text: string): string[] {
  const splitter = new SentenceSplitter();
  return [...splitter.push(text), ...splitter.flush()];
}
