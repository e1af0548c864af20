import { parentPort, workerData } from 'node:worker_threads';
import { openModelSession } from './onnx-session.ts';
import { sileroStepOn } from './silero-vad.ts';
import { smartTurnOn } from './smart-turn.ts';
import type { ModelThreadData, ModelThreadReply, ModelThreadRequest } from './model-thread.ts';

/**
 * The turn models' thread (model-thread.ts): loads one model, then answers each request in turn.
 * ONNX Runtime's `run` blocks the thread that calls it; here it blocks this one, not the bot's
 * main thread, where every session's audio, room and provider traffic runs.
 */
const port = parentPort;
if (!port) throw new Error('model-thread-entry.ts runs only as a worker thread');
const { kind, path } = workerData as ModelThreadData;

try {
  const session = await openModelSession(path);
  const answer =
    kind === 'vad'
      ? (() => {
          const step = sileroStepOn(session, path);
          return async (req: ModelThreadRequest): Promise<ModelThreadReply> => {
            if (!('input' in req)) throw new Error('a Silero VAD thread takes {input, state}');
            const { probability, state } = await step(req.input, req.state);
            return { id: req.id, probability, state };
          };
        })()
      : (() => {
          const infer = smartTurnOn(session, path);
          return async (req: ModelThreadRequest): Promise<ModelThreadReply> => {
            if (!('pcm' in req)) throw new Error('a Smart Turn thread takes {pcm}');
            return { id: req.id, probability: await infer(req.pcm) };
          };
        })();
  port.on('message', (req: ModelThreadRequest) => {
    answer(req).then(
      (reply) => port.postMessage(reply, reply.state ? [reply.state.buffer as ArrayBuffer] : []),
      (err: unknown) => port.postMessage({ id: req.id, error: (err as Error).message } satisfies ModelThreadReply),
    );
  });
  port.postMessage({ ready: true });
} catch (err) {
  port.postMessage({ fatal: (err as Error).message });
}
