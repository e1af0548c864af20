import { Worker } from 'node:worker_threads';
import { sileroSource } from './silero-vad.ts';
import { smartTurnModel } from './smart-turn.ts';
import type { SpeechProbabilitySource, TurnCompletionModel } from './types.ts';

/**
 * The turn models in worker threads of the bot process (TURN_MODEL_THREAD=true, docs/worker.md
 * "Density"): one thread per model, shared by every session of the process. ONNX Runtime's `run`
 * is synchronous on the calling thread (Smart Turn takes 85-210 ms here, Silero a fraction of a
 * millisecond every 32 ms per session), so on the main thread one session's end-of-turn inference
 * holds up the audio, the room and the provider traffic of the process's other sessions. The VAD
 * streams keep their state on the main thread and send it with each frame, so a stream needs
 * no closing and the thread holds nothing per session.
 */
export interface ModelThreadData {
  kind: 'vad' | 'turn';
  path: string;
}

export type ModelThreadRequest = { id: number; input: Float32Array; state: Float32Array } | { id: number; pcm: Int16Array };

export interface ModelThreadReply {
  id: number;
  probability?: number;
  state?: Float32Array;
  error?: string;
}

type Pending = { resolve: (reply: ModelThreadReply) => void; reject: (err: Error) => void };

export interface ModelThread {
  call(request: Omit<ModelThreadRequest, 'id'>): Promise<ModelThreadReply>;
  /** Ends the thread; calls pending or made later reject. */
  close(): Promise<void>;
}

const ENTRY = new URL('./model-thread-entry.ts', import.meta.url);
export const THREAD_NAMES = { vad: 'silero-vad', turn: 'smart-turn' } as const;

/**
 * Starts the thread and waits until its model is loaded; rejects with the loader's message (a wrong
 * file fails at prewarm). `onLost`: the thread ended later without `close()` (the bot process exits
 * then, so the worker reports its sessions and starts a fresh one, as for a crash of the process).
 */
export function startModelThread(data: ModelThreadData, onLost: (err: Error) => void = () => undefined): Promise<ModelThread> {
  // The name is the OS thread's too (/proc/<pid>/task/*/comm), so per-thread CPU accounting sees it.
  const thread = new Worker(ENTRY, { workerData: data, name: THREAD_NAMES[data.kind] });
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let stopped: Error | null = null;
  let ready = false;
  let closing = false;
  const label = data.kind === 'vad' ? 'Silero VAD' : 'Smart Turn';

  const stop = (err: Error): void => {
    if (stopped) return;
    stopped = err;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
    if (ready && !closing) onLost(err);
  };

  return new Promise<ModelThread>((resolve, reject) => {
    thread.on('message', (msg: ModelThreadReply | { ready: true } | { fatal: string }) => {
      if ('ready' in msg) {
        ready = true;
        // The thread alone must not keep a bot process alive once its sessions and room link are gone.
        thread.unref();
        resolve({
          call(request) {
            if (stopped) return Promise.reject(stopped);
            const id = nextId++;
            return new Promise((resolveCall, rejectCall) => {
              pending.set(id, { resolve: resolveCall, reject: rejectCall });
              thread.postMessage({ ...request, id });
            });
          },
          async close() {
            closing = true;
            stop(new Error(`the ${label} thread was closed`));
            await thread.terminate();
          },
        });
        return;
      }
      if ('fatal' in msg) {
        stop(new Error(msg.fatal));
        reject(new Error(msg.fatal));
        void thread.terminate();
        return;
      }
      const call = pending.get(msg.id);
      if (!call) return;
      pending.delete(msg.id);
      if (msg.error !== undefined) call.reject(new Error(`${label}: ${msg.error}`));
      else call.resolve(msg);
    });
    thread.on('error', (err) => {
      const error = new Error(`the ${label} thread failed: ${err.message}`, { cause: err });
      stop(error);
      reject(error);
    });
    thread.on('exit', (code) => {
      const error = new Error(`the ${label} thread exited (code ${code})`);
      stop(error);
      reject(error);
    });
  });
}

/** Silero VAD with its inference in a thread: each `open()` is a stream whose state stays here. */
export async function threadedSileroVadSource(
  path: string,
  onLost?: (err: Error) => void,
): Promise<SpeechProbabilitySource & { close(): Promise<void> }> {
  const thread = await startModelThread({ kind: 'vad', path }, onLost);
  const source = sileroSource(async (input, state) => {
    const reply = await thread.call({ input, state });
    return { probability: reply.probability!, state: reply.state! };
  });
  return { ...source, close: () => thread.close() };
}

/** Smart Turn with its features and inference in a thread. */
export async function threadedSmartTurn(
  path: string,
  onLost?: (err: Error) => void,
): Promise<TurnCompletionModel & { close(): Promise<void> }> {
  const thread = await startModelThread({ kind: 'turn', path }, onLost);
  return { ...smartTurnModel(async (pcm) => (await thread.call({ pcm })).probability!), close: () => thread.close() };
}
