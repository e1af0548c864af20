/**
 * Sentences out of text that arrives in pieces (a language model's stream), each as soon as it is
 * complete, so the first one can be spoken while the rest is still being written. A sentence ends
 * at . ! ? or … followed by a space (so "3.5" and "e.g.x" do not split); very short pieces ("Ok.")
 * are kept with the next one, since one text-to-speech call per word costs more than it saves.
 */
const END = /[.!?…]+["'”’)\]]*\s+/g;
const MIN_CHARS = 12;

export class SentenceSplitter {
  private buffer = '';

  /** Adds text; returns the sentences it completed. */
  push(text: string): string[] {
    this.buffer += text;
    const out: string[] = [];
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
    return out;
  }

  /** The text left when the stream ends. */
  flush(): string[] {
    const rest = this.buffer.trim();
    this.buffer = '';
    return rest ? [rest] : [];
  }
}

/** Splits a whole text into sentences. */
export function splitSentences(text: string): string[] {
  const splitter = new SentenceSplitter();
  return [...splitter.push(text), ...splitter.flush()];
}
