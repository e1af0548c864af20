import { describe, expect, it } from 'vitest';
import { streamDecision } from './decision-stream.ts';
import { parseDecision } from '../prompts.ts';
import { SentenceSplitter, splitSentences } from './sentences.ts';

/** How the bot reads its own reply as it streams: sentences, and the follow-up decision. */
async function* pieces(...parts: string[]): AsyncIterable<string> {
  for (const part of parts) {
    await new Promise((r) => setImmediate(r));
    yield part;
  }
}

async function collect(items: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('sentences', () => {
  it('gives each sentence as soon as it is complete, and keeps numbers and very short pieces whole', () => {
    const splitter = new SentenceSplitter();
    expect(splitter.push('Thanks. That is really helpful')).toEqual([]);
    expect(splitter.push('! What did you try first? It cost 3.5 ')).toEqual(['Thanks. That is really helpful!', 'What did you try first?']);
    expect(splitter.flush()).toEqual(['It cost 3.5']);
    expect(splitSentences('Question 1?')).toEqual(['Question 1?']);
  });

  it('ends a sentence at a ? ! or … that ends the text so far, without waiting for a space (issue 21)', () => {
    const eager = new SentenceSplitter({ eagerEnd: true });
    expect(eager.push('What did you try first?')).toEqual(['What did you try first?']);
    // What follows an eager end (a second "!", a closing quote) does not open the next sentence.
    expect(eager.push('! It cost 3.')).toEqual([]);
    expect(eager.push('5 in all.')).toEqual([]);
    expect(eager.flush()).toEqual(['It cost 3.5 in all.']);
    // Off (the splitter before issue 21): the question waits for a space or the end.
    const spaced = new SentenceSplitter();
    expect(spaced.push('What did you try first?')).toEqual([]);
  });

  it('sends the first clause alone once it has enough words, and only the first', () => {
    const clause = new SentenceSplitter({ eagerEnd: true, firstClauseWords: 5 });
    expect(clause.push('When your manager')).toEqual([]);
    expect(clause.push(' stepped in, what')).toEqual(['When your manager stepped in,']);
    expect(clause.push(' did they change, and')).toEqual([]);
    expect(clause.push(' why?')).toEqual(['what did they change, and why?']);
    // Too short a clause, a number's comma, or a sentence first: no clause.
    expect(new SentenceSplitter({ firstClauseWords: 5 }).push('Right, so what ')).toEqual([]);
    expect(new SentenceSplitter({ firstClauseWords: 2 }).push('It cost 1,000 dollars')).toEqual([]);
    expect(new SentenceSplitter({ firstClauseWords: 3 }).push('That is helpful. So when you started, ')).toEqual(['That is helpful.']);
  });
});

describe('the follow-up decision as it streams', () => {
  it('knows NEXT from the first token and speaks nothing', async () => {
    const d = streamDecision(pieces('NE', 'XT'));
    expect(await d.kind).toBe('next');
    expect(await collect(d.sentences)).toEqual([]);
    await d.done;
    expect(await d.first).toBeNull();
  });

  it('streams a follow-up sentence by sentence, the first before the reply ends', async () => {
    let released!: () => void;
    const gate = new Promise<void>((r) => (released = r));
    async function* reply(): AsyncIterable<string> {
      yield 'FOLLOW';
      yield '_UP: What made the setup slow? ';
      await gate;
      yield 'Was it the documentation?';
    }
    const d = streamDecision(reply());
    expect(await d.kind).toBe('follow_up');
    // The first sentence is told before the reply ends, without being taken from the stream (issue 40).
    expect(await d.first).toBe('What made the setup slow?');
    const iterator = d.sentences[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toBe('What made the setup slow?');
    released();
    expect((await iterator.next()).value).toBe('Was it the documentation?');
    expect((await iterator.next()).done).toBe(true);
  });

  it('reads anything else as NEXT, like the whole-reply parser', async () => {
    expect(await streamDecision(pieces('Sure, moving on.')).kind).toBe('next');
    expect(await streamDecision(pieces('FOLLOW_UP ', ': Why?')).kind).toBe('follow_up');
  });

  it('passes the provider error on', async () => {
    async function* broken(): AsyncIterable<string> {
      yield 'FOLLOW_UP: Why? ';
      throw new Error('stream broke');
    }
    const d = streamDecision(broken());
    await expect(d.done).rejects.toThrow('stream broke');
    await expect(collect(d.sentences)).rejects.toThrow('stream broke');
  });
});

describe('WAIT in the decision stream (issue 21)', () => {
  it('is wait only when the prompt offered it and the reply is WAIT and nothing more', async () => {
    expect(await streamDecision(pieces('WA', 'IT'), {}, true).kind).toBe('wait');
    expect(await streamDecision(pieces(' wait.'), {}, true).kind).toBe('wait');
    expect(await streamDecision(pieces('WA', 'IT'), {}, false).kind).toBe('next');
    expect(await streamDecision(pieces('WAIT, actually NEXT'), {}, true).kind).toBe('next');
    expect(await streamDecision(pieces('FOLLOW_UP: Wait, which tools?'), {}, true).kind).toBe('follow_up');
  });

  it('reads WAIT as parseDecision does', () => {
    expect(parseDecision('WAIT', true)).toEqual({ kind: 'wait' });
    expect(parseDecision('WAIT', false)).toEqual({ kind: 'next' });
  });
});
