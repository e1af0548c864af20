import { SentenceSplitter, type SplitterOptions } from './sentences.ts';

/**
 * The follow-up decision (`NEXT`, or `FOLLOW_UP: <question>`, worker/bot/prompts.ts) read while the
 * language model writes it: the kind is known from the first few tokens, and a follow-up's
 * sentences come out one by one as they complete, so the first can be spoken before the reply ends.
 * Anything that is not a follow-up is NEXT, as parseDecision reads a whole reply; `WAIT` is `wait`
 * only when the prompt offered it (`waitOffered`), and a reply that is `WAIT` and nothing more.
 */
export type DecisionKind = 'next' | 'follow_up' | 'wait';

/** The whole reply that means "not finished, keep listening" (offered only when the prompt says so). */
export const WAIT_REPLY = 'WAIT';

export interface DecisionStream {
  kind: Promise<DecisionKind>;
  /** The follow-up's sentences (nothing for NEXT). */
  sentences: AsyncIterable<string>;
  /** The follow-up's first sentence as soon as it is complete, without taking it from `sentences` (null: none). */
  first: Promise<string | null>;
  /** Settles when the reply has been read to its end (rejects with the provider's error). */
  done: Promise<void>;
}

const FOLLOW_UP = /^\s*FOLLOW_UP\s*:\s*/i;
/** A reply so far that may still become `FOLLOW_UP:`. */
const MAYBE_FOLLOW_UP = /^\s*(F|FO|FOL|FOLL|FOLLO|FOLLOW|FOLLOW_|FOLLOW_U|FOLLOW_UP\s*)?$/i;
/** A reply so far that may still be WAIT (and nothing more), and a whole one that is. */
const MAYBE_WAIT = new RegExp(`^\\s*(${[...WAIT_REPLY].map((_, i) => WAIT_REPLY.slice(0, i + 1)).join('|')})[\\s.!]*$`, 'i');
const IS_WAIT = new RegExp(`^\\s*${WAIT_REPLY}[\\s.!]*$`, 'i');

/** `split`: how the follow-up is cut for text-to-speech as it streams (sentences.ts); `waitOffered`: the prompt offered WAIT. */
export function streamDecision(deltas: AsyncIterable<string>, split: SplitterOptions = {}, waitOffered = false): DecisionStream {
  let decide!: (kind: DecisionKind) => void;
  const kind = new Promise<DecisionKind>((resolve) => (decide = resolve));
  const queue: string[] = [];
  let ended = false;
  let failure: unknown = null;
  let wake: (() => void) | null = null;
  let giveFirst!: (sentence: string | null) => void;
  const first = new Promise<string | null>((resolve) => (giveFirst = resolve));
  const notify = () => {
    if (queue.length > 0) giveFirst(queue[0]!);
    wake?.();
    wake = null;
  };

  const done = (async () => {
    const splitter = new SentenceSplitter(split);
    let head = '';
    let decided: DecisionKind | null = null;
    // Whether the reply so far may still be WAIT: it is only known to be WAIT when the reply ends.
    const maybeWait = () => waitOffered && MAYBE_WAIT.test(head);
    try {
      for await (const delta of deltas) {
        if (decided === 'next') continue;
        if (decided === 'follow_up') {
          queue.push(...splitter.push(delta));
          notify();
          continue;
        }
        head += delta;
        const match = FOLLOW_UP.exec(head);
        if (match) {
          decided = 'follow_up';
          decide('follow_up');
          queue.push(...splitter.push(head.slice(match[0].length)));
          notify();
        } else if (!MAYBE_FOLLOW_UP.test(head) && !maybeWait()) {
          decided = 'next';
          decide('next');
        }
      }
      if (decided === null) decide(FOLLOW_UP.test(head) ? 'follow_up' : waitOffered && IS_WAIT.test(head) ? 'wait' : 'next');
      if (decided === 'follow_up') queue.push(...splitter.flush());
    } catch (err) {
      failure = err;
      decide('next');
      throw err;
    } finally {
      ended = true;
      notify();
      giveFirst(null);
    }
  })();
  done.catch(() => undefined); // read through `done` or `sentences`

  async function* sentences(): AsyncIterable<string> {
    for (;;) {
      if (queue.length > 0) {
        yield queue.shift()!;
        continue;
      }
      if (ended) {
        if (failure) throw failure;
        return;
      }
      await new Promise<void>((resolve) => (wake = resolve));
    }
  }

  return { kind, sentences: sentences(), first, done };
}
