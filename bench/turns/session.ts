import type { LlmRule } from '../../test/fakes/llm-rules.ts';
import type { FakeOpenAIOptions } from '../../test/fakes/openai-compatible.ts';
import type { OtlpReceiver, ReceivedSpan } from '../../test/fakes/otlp-receiver.ts';
import type { UpstreamRecogniserOptions } from '../../test/fakes/upstream-recogniser.ts';
import { baseEnv, spawnBody, startWorkerProcess, waitIdleSlots } from '../../test/worker/harness.ts';
import { cpuSecondsOf, startServerProcess } from '../support.ts';
import type { AnswerItem } from './answer-set.ts';
import { fakeProfile, type LatencyProfile } from './profiles.ts';
import { runLiveKitBenchRespondent } from './livekit-respondent.ts';
import { runBenchRespondent, type SessionTimeline } from './respondent.ts';

/**
 * One interview for the bench: a real worker process (local or LiveKit rooms) with the pipeline's settings,
 * the stand-in provider in its own process with the profile's latency (its transcriptions heard by
 * the real recogniser of the speech server `deps.recogniser`, the profile's figure then being the
 * earliest a transcript may arrive), and the bench respondent saying `items`. Also samples the
 * live bot process's CPU over the session (/proc).
 */
export interface Pipeline {
  name: 'today' | 'new' | 'new-no-onset';
  env: Record<string, string>;
  /** The deliberate wait after the end of speech before the turn can end at the earliest. */
  endOfTurnWaitMs: number;
}

// The pipeline before issues 13, 21 and 40: the newer turn-taking settings are turned off by name, so a default that
// changes later cannot leak into this column.
export const TODAY: Pipeline = {
  name: 'today',
  env: {
    VAD_ENGINE: 'energy',
    TURN_DETECTION: 'silence',
    STT_MODE: 'batch',
    BARGE_IN: 'false',
    VAD_SILENCE_MS: '700',
    LLM_WAIT_MAX_MS: '0',
    LLM_PREEMPTIVE: 'false',
    TURN_PAUSE_LEARNING_MAX_MS: '0',
    TURN_HOLD_MS: '0',
  },
  endOfTurnWaitMs: 700,
};
// The defaults (VAD_SILENCE_MS is set to its default only because the test harness lowers it).
export const NEW: Pipeline = { name: 'new', env: { VAD_SILENCE_MS: '700' }, endOfTurnWaitMs: 200 };

export interface SessionResult {
  timeline: SessionTimeline;
  /** The bot process's CPU over the session, as a share of one core. */
  botCpuShare: number;
  seconds: number;
  /** The worker's spans of this session (turn.end, stt.final, ...). */
  spans: ReceivedSpan[];
}

/** Spans arrive in batches: waits until no new one has come for a second (at most 8 s). */
async function settledSpans(otlp: OtlpReceiver, service: string): Promise<ReceivedSpan[]> {
  const mine = () => otlp.spans.filter((s) => s.resource['service.name'] === service);
  let count = -1;
  let stableSince = performance.now();
  for (const deadline = performance.now() + 8000; performance.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
    if (mine().length !== count) {
      count = mine().length;
      stableSince = performance.now();
    } else if (performance.now() - stableSince >= 1000) break;
  }
  return mine();
}

/**
 * Questions long enough (the tone voice speaks 3 s) for an interruption 1 s in; spares for a bot that moves on early
 * (at most the 50 an interview may have).
 */
function interview(questions: number): Record<string, unknown> {
  return {
    title: 'Turn-taking bench',
    language: 'en',
    intro: 'Hi, thanks for joining.',
    questions: Array.from({ length: Math.min(50, questions) }, (_, i) => ({
      id: `q${i + 1}`,
      text: `Question ${i + 1}: tell me a little about how your team has used the product over the last few months.`,
      maxFollowUps: 2,
    })),
    closing: 'Thanks, bye.',
  };
}

/** Where the session runs and who answers for the language model. */
export interface SessionSetup {
  room: 'local' | 'livekit';
  /** LIVEKIT_URL and its keys, ROOM_PROVIDER=livekit (test/harness/livekit-server.ts), for `room: 'livekit'`. */
  livekitEnv?: Record<string, string>;
  /** The stand-in's scripted decisions (llm-rules.ts): its judgement, not a model's. */
  llmRules?: LlmRule[];
  /** A real OpenAI-compatible language model instead of the stand-in's (speech stays self-hosted and stand-in). */
  llm?: { baseURL: string; apiKey: string; model?: string };
}

/**
 * Where the bot's speech-to-text goes. `speech-server` (the bench's default): straight to the
 * self-hosted speech server, as a pool with self-hosted speech runs it (realtime sessions decoded
 * in pieces while the respondent talks, docs/speech.md "Realtime decoding"); its real decode is the
 * latency. `stand-in`: through the stand-in provider, which sends each commit whole to the same
 * recogniser and holds the transcript to the profile's hosted-provider figure at the earliest (how
 * the tables before 2026-11-28 evening were made).
 */
export const STT_ROUTES = ['speech-server', 'stand-in'] as const;
export type SttRoute = (typeof STT_ROUTES)[number];

export async function runSession(
  pipeline: Pipeline,
  profile: LatencyProfile,
  items: AnswerItem[],
  deps: { redisUrl: string; backendUrl: string; otlp: OtlpReceiver; recogniser: UpstreamRecogniserOptions; sttRoute: SttRoute },
  setup: SessionSetup = { room: 'local' },
): Promise<SessionResult> {
  // Tones, not espeak, for the bot's voice: synthesis in the fake would count as provider time.
  const options: FakeOpenAIOptions = {
    voice: 'tone',
    profile: fakeProfile(profile),
    recogniser: deps.recogniser,
    llmRules: setup.llmRules ?? [],
  };
  const fake = await startServerProcess('bench/servers/fake-openai-server.ts', { FAKE_OPENAI_OPTIONS: JSON.stringify(options) });
  const llmUrl = `http://127.0.0.1:${fake.port}/v1`;
  const tag = `${pipeline.name}-${profile.name}-${setup.room}${setup.llm ? '-real-llm' : ''}`;
  const service = `bench-turns-${tag}-${Date.now()}`;
  if (setup.room === 'livekit' && !setup.livekitEnv) throw new Error('a LiveKit session needs the livekit-server environment (livekitEnv)');
  const directStt = deps.sttRoute === 'speech-server' ? { STT_BASE_URL: deps.recogniser.url, STT_API_KEY: deps.recogniser.token } : {};
  const realLlm = setup.llm
    ? { LLM_BASE_URL: setup.llm.baseURL, LLM_API_KEY: setup.llm.apiKey, ...(setup.llm.model ? { LLM_MODEL: setup.llm.model } : {}) }
    : {};
  const worker = await startWorkerProcess(
    baseEnv({
      redisUrl: deps.redisUrl,
      backendUrl: deps.backendUrl,
      llmUrl,
      REDIS_KEY_PREFIX: `bench-turns-${tag}-${Date.now()}`,
      WARM_POOL_SIZE: '1',
      IDLE_TIMEOUT_SECONDS: '30',
      JOIN_TIMEOUT_SECONDS: '30',
      PROVIDER_TIMEOUT_MS: '60000',
      OTEL_EXPORTER_OTLP_ENDPOINT: deps.otlp.url,
      OTEL_SERVICE_NAME: service,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      ...(setup.room === 'livekit' ? setup.livekitEnv : {}),
      ...directStt,
      ...realLlm,
      ...pipeline.env,
    }),
  );
  try {
    await worker.waitReady(60_000);
    await waitIdleSlots(worker, 1, 60_000);
    const [bot] = worker.botPids();
    if (bot === undefined) throw new Error(`no bot process under the worker (logs: ${worker.logs.join('').slice(-1500)})`);
    const res = await worker.spawnSession(spawnBody({ interview: interview(items.length + 10) }));
    if (res.status !== 200) throw new Error(`spawn answered ${res.status}: ${JSON.stringify(res.body)}`);
    const t0 = performance.now();
    const cpu0 = cpuSecondsOf(bot);
    let cpu1 = NaN;
    let t1 = NaN;
    const respond = setup.room === 'livekit' ? runLiveKitBenchRespondent : runBenchRespondent;
    const timeline = await respond({
      roomUrl: String(res.body.room_url),
      token: String(res.body.token),
      items,
      timeoutMs: 120_000 + items.length * 20_000,
      beforeHangup: () => {
        t1 = performance.now();
        cpu1 = cpuSecondsOf(bot);
      },
    });
    // The bot may end the interview itself after the last item (its questions used up): the session's end then.
    if (Number.isNaN(t1)) {
      t1 = performance.now();
      try {
        cpu1 = cpuSecondsOf(bot);
      } catch {
        // The bot process is gone (recycled): its CPU is unknown, the rest of the session stands.
      }
    }
    if (timeline.unplayed > 0)
      console.error(`${pipeline.name}/${profile.name}: the session ended (${timeline.endReason}) with ${timeline.unplayed} items unsaid`);
    return {
      timeline,
      botCpuShare: (cpu1 - cpu0) / ((t1 - t0) / 1000),
      seconds: (t1 - t0) / 1000,
      spans: await settledSpans(deps.otlp, service),
    };
  } catch (err) {
    throw new Error(
      `${pipeline.name} pipeline, ${profile.name} profile, ${setup.room} ` +
        `room${setup.llm ? ', real language model' : ''}: ${(err as Error).message}\nworker logs: ` +
        `${worker.logs.join('').slice(-2000)}`,
      { cause: err },
    );
  } finally {
    await worker.stop();
    await fake.stop();
  }
}
