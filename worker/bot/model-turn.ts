import {
  ATTR_LLM_DROPPED,
  ATTR_LLM_PURPOSE,
  ATTR_LLM_SPECULATIVE,
  ATTR_LLM_TTFT_MS,
  ATTR_MODEL,
  ATTR_PROVIDER,
  ATTR_SESSION_ID,
  SPAN_LLM_TURN,
} from '../telemetry/names.ts';
import type { ChatMessage, LanguageModel } from '../providers/llm.ts';
import type { BotEventSink } from '../telemetry/bot-events.ts';

/**
 * One call to the language model, streamed or whole, with its `llm.turn` span (time to first token
 * when there is one) and its latency measure, recorded here and nowhere else: on success, and with
 * the error when the call fails. A call the dialogue dropped (aborted with `DroppedReply`: the
 * respondent went on, or a speculative call's words did not match) is not a failure: its span says
 * `llm.dropped`, and a speculative call's says `llm.speculative` (issue 21).
 */
export type ModelPurpose = 'follow_up' | 'summary';

export interface ModelTurnOptions {
  llm: LanguageModel;
  sessionId: string;
  telemetry: BotEventSink;
  clock: () => number;
}

export interface ModelCall {
  purpose: ModelPurpose;
  signal: AbortSignal;
  maxTokens: number;
  /** Started on a pause's words before the turn ended (preemptive generation). */
  speculative?: boolean;
}

/** The reason the dialogue aborts a call whose reply it will not speak. */
export class DroppedReply extends Error {
  constructor() {
    super('The reply was dropped before it was spoken.');
    this.name = 'DroppedReply';
  }
}

export class ModelTurn {
  private readonly options: ModelTurnOptions;

  constructor(options: ModelTurnOptions) {
    this.options = options;
  }

  /** The reply as text deltas; the span ends with the stream (or its failure). */
  async *stream(messages: ChatMessage[], call: ModelCall): AsyncIterable<string> {
    const measure = this.start(call);
    try {
      for await (const delta of this.options.llm.stream(messages, { signal: call.signal, maxTokens: call.maxTokens })) {
        measure.firstToken();
        yield delta;
      }
    } catch (err) {
      measure.failed(err);
      throw err;
    }
    measure.done();
  }

  /** The whole reply in one answer (the summary). */
  async complete(messages: ChatMessage[], call: ModelCall): Promise<string> {
    const measure = this.start(call);
    try {
      const text = await this.options.llm.complete(messages, { signal: call.signal, maxTokens: call.maxTokens });
      measure.done();
      return text;
    } catch (err) {
      measure.failed(err);
      throw err;
    }
  }

  private start(call: ModelCall) {
    const { llm, sessionId, telemetry, clock } = this.options;
    const { purpose } = call;
    const t0 = clock();
    let ttft: number | undefined;
    const attributes = {
      [ATTR_SESSION_ID]: sessionId,
      [ATTR_PROVIDER]: llm.provider,
      [ATTR_MODEL]: llm.model,
      [ATTR_LLM_PURPOSE]: purpose,
      ...(call.speculative ? { [ATTR_LLM_SPECULATIVE]: true } : {}),
    };
    const timing = () => (ttft !== undefined ? { [ATTR_LLM_TTFT_MS]: ttft } : {});
    return {
      firstToken: () => {
        ttft ??= clock() - t0;
      },
      done: () => {
        const t1 = clock();
        telemetry({ type: 'span', span: { name: SPAN_LLM_TURN, startMs: t0, endMs: t1, attributes: { ...attributes, ...timing() } } });
        telemetry({ type: 'provider_latency', provider: 'llm', operation: purpose, seconds: (t1 - t0) / 1000 });
      },
      failed: (err: unknown) => {
        if (call.signal.aborted && call.signal.reason instanceof DroppedReply) {
          telemetry({
            type: 'span',
            span: {
              name: SPAN_LLM_TURN,
              startMs: t0,
              endMs: clock(),
              attributes: { ...attributes, ...timing(), [ATTR_LLM_DROPPED]: true },
            },
          });
          return;
        }
        telemetry({ type: 'span', span: { name: SPAN_LLM_TURN, startMs: t0, endMs: clock(), attributes, error: (err as Error).message } });
      },
    };
  }
}
