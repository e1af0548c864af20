import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { encodeAudio, encodeJson, FrameDecoder } from './framing.ts';

/**
 * One Daily bridge process (bridge.py, Daily's Python SDK) seen from Node: started ahead of its
 * session, it says `ready`; then it joins one room, moves audio and events, and exits after
 * `leave` or when its input closes. Emits `event` (a JSON event object), `audio` (PCM16 16 kHz
 * mono from the room) and `exit` (a reason string) once.
 */
export const BRIDGE_SCRIPT = fileURLToPath(new URL('./bridge.py', import.meta.url));

export interface BridgeEvent {
  event: string;
  [field: string]: unknown;
}

/**
 * The bridge gets only what Python, the SDK and the test fake need: never the worker's secrets
 * (WORKER_TOKEN, model keys, DAILY_API_KEY); the bot's meeting token arrives in its `join` frame.
 */
const PASSED =
  /^(PATH|HOME|LANG|LC_[A-Z]+|TZ|TMPDIR|PYTHON[A-Z_]*|SSL_CERT_(FILE|DIR)|(HTTPS?|NO|ALL)_PROXY|(https?|no|all)_proxy|FAKE_DAILY_ROOM)$/;

export function bridgeEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => PASSED.test(name)));
}

export interface BridgeOptions {
  /** The Python interpreter with daily-python installed (DAILY_BRIDGE_PYTHON). */
  python: string;
  /** Filtered by bridgeEnvironment; process.env by default. */
  env?: NodeJS.ProcessEnv;
  readyTimeoutMs?: number;
}

export class DailyBridge extends EventEmitter {
  /** Resolves once the bridge has imported the SDK and made its client; rejects if it cannot. */
  readonly ready: Promise<void>;
  private readonly child: ChildProcessByStdio<Writable, Readable, Readable>;
  private exitReason: string | null = null;
  private stderrTail = '';

  constructor(options: BridgeOptions) {
    super();
    // -B: the image's code folder is read-only to the worker's user; no bytecode files.
    const env = bridgeEnvironment(options.env ?? process.env);
    this.child = spawn(options.python, ['-B', BRIDGE_SCRIPT], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdin.on('error', () => undefined); // EPIPE after an exit; the exit event says why
    this.child.stderr.setEncoding('utf8').on('data', (text: string) => {
      // Kept for failure messages only: the SDK's own log lines, a Python traceback.
      this.stderrTail = (this.stderrTail + text).slice(-2000);
    });
    const decoder = new FrameDecoder();
    this.child.stdout.on('data', (chunk: Buffer) => {
      try {
        for (const frame of decoder.push(chunk)) {
          if (frame.kind === 'audio') this.emit('audio', frame.pcm);
          else this.emit('event', frame.value as BridgeEvent);
        }
      } catch (err) {
        this.fail(`the Daily bridge wrote a corrupt frame: ${(err as Error).message}`);
      }
    });
    this.child.on('error', (err) =>
      this.exited(`the Daily bridge could not start (DAILY_BRIDGE_PYTHON=${options.python}): ${err.message}`),
    );
    this.child.on('close', (code, signal) => this.exited(`the Daily bridge exited (${signal ?? `code ${code}`})${this.lastError()}`));

    const timeoutMs = options.readyTimeoutMs ?? 15_000;
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the Daily bridge was not ready within ${timeoutMs} ms${this.lastError()}`)),
        timeoutMs,
      );
      const onEvent = (e: BridgeEvent) => {
        if (e.event !== 'ready') return;
        clearTimeout(timer);
        this.off('exit', onExit);
        resolve();
      };
      const onExit = (reason: string) => {
        clearTimeout(timer);
        this.off('event', onEvent);
        reject(new Error(reason));
      };
      this.on('event', onEvent);
      this.once('exit', onExit);
    });
    this.ready.catch(() => undefined); // whoever joins awaits it; an unused prewarm must not crash the bot
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return this.exitReason === null;
  }

  send(command: Record<string, unknown>): void {
    if (this.alive) this.child.stdin.write(encodeJson(command));
  }

  sendAudio(pcm: Buffer): void {
    if (this.alive && pcm.length > 0) this.child.stdin.write(encodeAudio(pcm));
  }

  /** Asks the bridge to leave after what is queued (audio included), then kills it if it lingers. */
  leave(graceMs = 60_000): void {
    if (!this.alive) return;
    this.send({ op: 'leave' });
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    timer.unref();
    this.once('exit', () => clearTimeout(timer));
  }

  kill(): void {
    if (this.alive) this.child.kill('SIGKILL');
  }

  private fail(reason: string): void {
    this.exited(reason);
    this.child.kill('SIGKILL');
  }

  private exited(reason: string): void {
    if (this.exitReason !== null) return;
    this.exitReason = reason;
    this.emit('exit', reason);
  }

  private lastError(): string {
    const line = this.stderrTail.trim().split('\n').at(-1)?.slice(0, 300);
    return line ? `: ${line}` : '';
  }
}
