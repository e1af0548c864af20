import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LlmRule } from '../test/fakes/llm-rules.ts';
import { startOtlpReceiver, type ReceivedSpan } from '../test/fakes/otlp-receiver.ts';
import { ensureNonLoopbackInterface, startLiveKitServer } from '../test/harness/livekit-server.ts';
import { startRedis } from '../test/harness/redis.ts';
import { startSpeechServer } from '../test/harness/speech-server.ts';
import { turnModelsDir } from '../test/harness/turn-models.ts';
import { startFakeBackend } from '../test/worker/harness.ts';
import {
  ATTR_LLM_DROPPED,
  ATTR_LLM_TTFT_MS,
  ATTR_TURN_END_REASON,
  SPAN_LLM_TURN,
  SPAN_STT_FINAL,
  SPAN_TTS_FIRST_BYTE,
  SPAN_TURN_END,
} from '../worker/telemetry/names.ts';
import { buildAnswerSet, type AnswerItem } from './turns/answer-set.ts';
import { detectorCpu } from './turns/cpu.ts';
import { REPLY_PATHS, summarize, type Ratio, type ReplyPath, type RunSummary } from './turns/metrics.ts';
import { REALISTIC, REALISTIC_SOURCES, ZERO, type LatencyProfile } from './turns/profiles.ts';
import { NEW as NEW_DEFAULTS, runSession, STT_ROUTES, TODAY, type Pipeline, type SessionSetup, type SttRoute } from './turns/session.ts';
import { machineLine, ms, percentile, printTable } from './support.ts';

/**
 * Turn-taking, today's pipeline (energy VAD, 700 ms of silence, batch STT, no barge-in) and the new
 * one (the defaults: Silero VAD, Smart Turn, realtime STT, barge-in, the model's WAIT) side by side
 * in one run, each in a real worker process, in local rooms and (the new one) in LiveKit rooms
 * through a real livekit-server, with the stand-in language model and voice under two latency
 * profiles and a respondent speaking in real time (the Piper voice, a few espeak-ng; bench/turns/).
 * What the respondent says is heard by the real recogniser: the self-hosted speech server, which the
 * bot calls directly as a pool with self-hosted speech does (BENCH_TURNS_STT=stand-in routes it
 * through the stand-in instead: each commit decoded whole, the profile's hosted figure the earliest
 * a transcript may arrive). Sessions:
 * - latency (realistic profile): rounds of four answers, two the stand-in answers with a follow-up
 *   (it writes FOLLOW_UP_TEXT), one answering a follow-up (no model call: the question's follow-ups
 *   are used up) and one it answers NEXT to: end of speech to the bot's first audio per path, and
 *   the worker's spans per part (end of turn, transcription, first token, first audio byte);
 * - zero profile (local): the system's own share;
 * - behaviour (realistic): thinking pauses (a tuning half and a held-out half), short answers,
 *   interruptions, backchannels;
 * - behaviour again (local and LiveKit) with BARGE_IN_PAUSE_MS=0: the voice pauses once a turn has
 *   started, as before 2026-11-28, the peer of the default pause at a speech onset;
 * - the pause answers again with the stand-in scripted to answer WAIT at every pause (its
 *   judgement is the script's: what WAIT can do when the model judges right, not what a model does);
 * - with OPENAI_API_KEY: the new pipeline's behaviour and latency sessions with a real language model
 *   (LLM_BASE_URL from BENCH_LLM_BASE_URL, default OpenAI; BENCH_LLM_MODEL), speech still self-hosted.
 * Knobs: BENCH_TURNS_QUICK=1 (a smoke run: two latency rounds, a third of the behaviour set),
 * BENCH_TURNS_ROUNDS (latency rounds, default 15: 30 follow-ups, 30 next questions per session),
 * BENCH_TURNS_SESSIONS (a comma-separated list such as `new/behaviour,new/wait`: only those run; the
 * others print "not run").
 */
const quick = process.env.BENCH_TURNS_QUICK === '1';
const ROUNDS = Number(process.env.BENCH_TURNS_ROUNDS ?? (quick ? 2 : 15));
const sttRoute = (process.env.BENCH_TURNS_STT ?? 'speech-server') as SttRoute;
if (!STT_ROUTES.includes(sttRoute)) throw new Error(`BENCH_TURNS_STT must be one of ${STT_ROUTES.join(', ')}`);
const onlySessions = process.env.BENCH_TURNS_SESSIONS ? new Set(process.env.BENCH_TURNS_SESSIONS.split(',').map((s) => s.trim())) : null;
const set = buildAnswerSet();
const by = (id: string): AnswerItem => {
  const found = Object.values(set)
    .flat()
    .find((i) => i.id === id || i.id.startsWith(`${id}-`));
  if (!found) throw new Error(`no answer item ${id}`);
  return found;
};
const cut = <T>(xs: T[]): T[] => (quick ? xs.slice(0, Math.ceil(xs.length / 3)) : xs);

/** What the stand-in says when scripted to follow up: the bench tells the paths apart by it. */
const FOLLOW_UP_TEXT = 'Could you tell me a little more about that?';
/** Answers the stand-in follows up on, by a word the recogniser hears in them (the Piper voice). */
const FOLLOW_UP_ON: Array<[string, string]> = [
  ['plain-1', 'conference'],
  ['plain-2', 'reporting'],
  ['plain-4', 'billing'],
  ['plain-5', 'mobile'],
  ['plain-6', 'twenty'],
];
/** Answers to a follow-up (no model call follows), and answers the stand-in says NEXT to. */
const FILLERS = ['short-1', 'short-2', 'short-3', 'plain-3', 'plain-7'];
const NEXT_ON = ['plain-8', 'plain-9', 'plain-10'];
const FOLLOW_UP_RULES: LlmRule[] = FOLLOW_UP_ON.map(([, word]) => ({ words: `\\b${word}\\b`, reply: `FOLLOW_UP: ${FOLLOW_UP_TEXT}` }));
const LATENCY = Array.from({ length: ROUNDS }, (_, r) => [
  FOLLOW_UP_ON[(2 * r) % FOLLOW_UP_ON.length]![0],
  FOLLOW_UP_ON[(2 * r + 1) % FOLLOW_UP_ON.length]![0],
  FILLERS[r % FILLERS.length]!,
  NEXT_ON[r % NEXT_ON.length]!,
])
  .flat()
  .map(by);

// Kinds interleaved; a backchannel rides on the question its following answer replies to, an
// interruption is the answer to the question it interrupts. The held-out pauses come last.
const BEHAVIOUR = [
  ...[
    'plain-1',
    'pause-1',
    'short-1',
    'backchannel-1',
    'plain-2',
    'pause-2',
    'interruption-1',
    'plain-3',
    'pause-3',
    'noise-2',
    'short-2',
    'pause-4',
    'plain-4',
    'interruption-2',
    'pause-5',
    'backchannel-3',
    'plain-5',
    'pause-6',
    'short-3',
    'plain-6',
    'interruption-3',
    'pause-7',
    'noise-4',
    'plain-7',
    'pause-8',
    'backchannel-5',
    'plain-8',
    'interruption-4',
    'pause-9',
    'backchannel-6',
    'plain-9',
    'interruption-5',
    'pause-10',
    'backchannel-7',
    'plain-10',
    'interruption-6',
  ].map(by),
  ...set.pause.filter((i) => i.heldOut),
];
// The zero profile measures latency only: plain and short answers, nothing during the bot's speech.
const ZERO_ITEMS = [
  'plain-1',
  'short-1',
  'plain-2',
  'plain-3',
  'short-2',
  'plain-4',
  'plain-5',
  'short-3',
  'plain-6',
  'plain-7',
  'plain-8',
  'plain-9',
  'plain-10',
].map(by);
const PAUSES = set.pause;
/** The scripted WAIT: at each pause answer's pause, by the last word said before it. */
const WAIT_RULES: LlmRule[] = PAUSES.map((i) => {
  const before = i.text.split(' ... ')[0]!;
  const last = before
    .replace(/[^a-z ]/gi, '')
    .trim()
    .split(/\s+/)
    .at(-1)!;
  return { words: `\\b${last}[^a-z]*$`, reply: 'WAIT' };
});

// The new pipeline's model files, fetched once (scripts/turn-models.sh), for the worker and for the CPU measure.
const modelsDir = turnModelsDir();
const NEW: Pipeline = { ...NEW_DEFAULTS, env: { ...NEW_DEFAULTS.env, TURN_MODELS_DIR: modelsDir } };
/** The peer of the onset pause: the bot's voice pauses only once a turn has started (before 2026-11-28). */
const NEW_NO_ONSET: Pipeline = { ...NEW, name: 'new-no-onset', env: { ...NEW.env, BARGE_IN_PAUSE_MS: '0' } };
const realKey = process.env.OPENAI_API_KEY;
const realLlm = realKey
  ? {
      baseURL: process.env.BENCH_LLM_BASE_URL ?? 'https://api.openai.com/v1',
      apiKey: realKey,
      ...(process.env.BENCH_LLM_MODEL ? { model: process.env.BENCH_LLM_MODEL } : {}),
    }
  : undefined;

/** One session's outcome: its measures, its spans, its bot's CPU. */
interface Outcome {
  summary: RunSummary | Error;
  spans: ReceivedSpan[];
  botCpu: number;
}
type ColumnName = 'today' | 'new' | 'new-livekit' | 'new-real-llm' | 'new-no-onset' | 'new-livekit-no-onset';
type SessionKind = 'latency' | 'zero' | 'behaviour' | 'wait';
const outcomes = new Map<string, Outcome>();
const key = (column: ColumnName, kind: SessionKind): string => `${column}/${kind}`;

console.log(`${machineLine()} (shared machine: tails move with it)`);
// One speech server for every session: its recogniser (about 0.7 GB) loads once.
const speech = await startSpeechServer({}, join(mkdtempSync(join(tmpdir(), 'bench-turns-')), 'logs'));
const redis = await startRedis();
const backend = await startFakeBackend();
const otlp = await startOtlpReceiver();
const removeInterface = ensureNonLoopbackInterface((line) => console.error(line));
const livekit = await startLiveKitServer();
try {
  const run = async (
    column: ColumnName,
    kind: SessionKind,
    pipeline: Pipeline,
    profile: LatencyProfile,
    items: AnswerItem[],
    setup: SessionSetup,
  ) => {
    if (onlySessions && !onlySessions.has(key(column, kind))) return;
    try {
      const result = await runSession(
        pipeline,
        profile,
        items,
        { redisUrl: redis.url, backendUrl: backend.url, otlp, recogniser: { url: speech.url, token: speech.token }, sttRoute },
        setup,
      );
      const summary = summarize(result.timeline.plays, result.timeline.events, {
        captions: result.timeline.captions,
        followUpText: FOLLOW_UP_TEXT,
      });
      outcomes.set(key(column, kind), { summary, spans: result.spans, botCpu: result.botCpuShare });
      console.error(`${column}/${kind}: ${result.timeline.plays.length} items in ${result.seconds.toFixed(0)} s`);
    } catch (err) {
      outcomes.set(key(column, kind), { summary: err as Error, spans: [], botCpu: NaN });
      console.error(String((err as Error).message));
    }
  };
  const local: SessionSetup = { room: 'local' };
  const onLiveKit: SessionSetup = { room: 'livekit', livekitEnv: livekit.env };
  // Alternating, so that a change in the machine's load hits the columns alike.
  await run('today', 'zero', TODAY, ZERO, cut(ZERO_ITEMS), local);
  await run('new', 'zero', NEW, ZERO, cut(ZERO_ITEMS), local);
  await run('today', 'latency', TODAY, REALISTIC, LATENCY, { ...local, llmRules: FOLLOW_UP_RULES });
  await run('new', 'latency', NEW, REALISTIC, LATENCY, { ...local, llmRules: FOLLOW_UP_RULES });
  await run('new-livekit', 'latency', NEW, REALISTIC, LATENCY, { ...onLiveKit, llmRules: FOLLOW_UP_RULES });
  await run('today', 'behaviour', TODAY, REALISTIC, cut(BEHAVIOUR), local);
  await run('new', 'behaviour', NEW, REALISTIC, cut(BEHAVIOUR), local);
  await run('new-no-onset', 'behaviour', NEW_NO_ONSET, REALISTIC, cut(BEHAVIOUR), local);
  await run('new-livekit', 'behaviour', NEW, REALISTIC, cut(BEHAVIOUR), onLiveKit);
  await run('new-livekit-no-onset', 'behaviour', NEW_NO_ONSET, REALISTIC, cut(BEHAVIOUR), onLiveKit);
  await run('new', 'wait', NEW, REALISTIC, cut(PAUSES), { ...local, llmRules: WAIT_RULES });
  if (realLlm) {
    await run('new-real-llm', 'latency', NEW, REALISTIC, LATENCY, { ...local, llm: realLlm });
    await run('new-real-llm', 'behaviour', NEW, REALISTIC, cut(BEHAVIOUR), { ...local, llm: realLlm });
  }
} finally {
  await backend.close();
  await otlp.close();
  await redis.stop();
  await speech.stop();
  await livekit.stop();
  removeInterface?.();
}

const everything = Object.values(set).flat();
const cpuToday = await detectorCpu(everything, TODAY.env, null);
const cpuNew = await detectorCpu(everything, NEW.env, modelsDir);

const frac = (r: Ratio): string => `${r.count}/${r.of}`;
const pct = (x: number): string => (Number.isNaN(x) ? 'n/a' : `${(x * 100).toFixed(x < 0.1 ? 2 : 1)}%`);
const p50p90 = (xs: number[]): string => (xs.length === 0 ? 'n/a' : `${ms(percentile(xs, 50))} / ${ms(percentile(xs, 90))} (${xs.length})`);
const columns: ColumnName[] = realLlm ? ['today', 'new', 'new-livekit', 'new-real-llm'] : ['today', 'new', 'new-livekit'];
const cell = (column: ColumnName, kind: SessionKind, show: (s: RunSummary) => string): string => {
  const o = outcomes.get(key(column, kind));
  if (!o) return 'not run';
  return o.summary instanceof Error ? 'failed' : show(o.summary);
};
const row = (metric: string, kind: SessionKind, show: (s: RunSummary) => string, aim = ''): string[] => [
  metric,
  ...columns.map((c) => cell(c, kind, show)),
  aim,
];
// Where a turn's time goes, from the worker's own spans (the latency session).
const spanMs = (s: ReceivedSpan): number => Number(s.endNs - s.startNs) / 1e6;
const spansOf = (column: ColumnName, name: string): ReceivedSpan[] =>
  outcomes.get(key(column, 'latency'))?.spans.filter((s) => s.name === name) ?? [];
const spanRow = (metric: string, values: (column: ColumnName) => number[], aim = ''): string[] => [
  metric,
  ...columns.map((c) => (outcomes.has(key(c, 'latency')) ? p50p90(values(c)) : 'not run')),
  aim,
];
const reasons = (column: ColumnName): string => {
  const counts = new Map<string, number>();
  for (const s of spansOf(column, SPAN_TURN_END))
    counts.set(String(s.attributes[ATTR_TURN_END_REASON]), (counts.get(String(s.attributes[ATTR_TURN_END_REASON])) ?? 0) + 1);
  return counts.size === 0 ? 'n/a' : [...counts].map(([k, v]) => `${k} ${v}`).join(', ');
};
const endOfTurnWait = (column: ColumnName): number => (column === 'today' ? TODAY.endOfTurnWaitMs : NEW.endOfTurnWaitMs);
const PATH_LABEL: Record<ReplyPath, string> = {
  follow_up: 'a follow-up the model writes',
  next_after_model: "the next question, after the model's NEXT",
  next_without_call: 'the next question, no model call (follow-ups used up)',
};

console.log(
  `\nturn-taking: today (${Object.entries(TODAY.env)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}) vs new (defaults), in real worker processes; ` +
    `local rooms, and LiveKit rooms through a real livekit-server (new-livekit); the stand-in language model and ` +
    `voice${realLlm ? ' (new-real-llm: a real language model)' : ''}; ` +
    `speech heard by the self-hosted recogniser (` +
    (sttRoute === 'speech-server' ? 'the bot calls the speech server directly' : 'through the stand-in, each commit decoded whole') +
    '); ' +
    (quick ? 'QUICK run (two latency rounds, a third of the behaviour set)' : `${ROUNDS} latency rounds, the full behaviour set`) +
    (onlySessions ? `; ONLY the sessions ${[...onlySessions].join(', ')}` : '') +
    '. ' +
    'Cells: p50 / p90 (turns).',
);
printTable(
  ['metric', ...columns, 'aim'],
  [
    row(
      'end of speech -> first bot audio, realistic profile, all replies',
      'latency',
      (s) => p50p90(s.latencies),
      'p50 < 600, p90 < 1000 ms',
    ),
    ...REPLY_PATHS.map((path) => row(`... ${PATH_LABEL[path]}`, 'latency', (s) => p50p90(s.latencyByPath[path]))),
    row('end of speech -> first bot audio, zero profile', 'zero', (s) => p50p90(s.latencies)),
    [
      `system's own share (zero p50 minus the end-of-turn wait: ${TODAY.endOfTurnWaitMs} / ${NEW.endOfTurnWaitMs} ms)`,
      ...columns.map((c) => cell(c, 'zero', (s) => ms(percentile(s.latencies, 50) - endOfTurnWait(c)))),
      '< 30 ms',
    ],
    spanRow("part: bot's end of speech -> turn decided (turn.end)", (c) => spansOf(c, SPAN_TURN_END).map(spanMs)),
    ['turns ended by (turn.end reason)', ...columns.map(reasons), ''],
    spanRow('part: turn decided -> final transcript (stt.final)', (c) => spansOf(c, SPAN_STT_FINAL).map(spanMs)),
    spanRow('part: language model first token (llm.turn, calls kept)', (c) =>
      spansOf(c, SPAN_LLM_TURN)
        .filter((s) => s.attributes[ATTR_LLM_DROPPED] !== true && typeof s.attributes[ATTR_LLM_TTFT_MS] === 'number')
        .map((s) => Number(s.attributes[ATTR_LLM_TTFT_MS])),
    ),
    spanRow('part: text-to-speech first byte (tts.first_byte)', (c) => spansOf(c, SPAN_TTS_FIRST_BYTE).map(spanMs)),
    row('premature cut-ins, tuning pauses <= 1.2 s', 'behaviour', (s) => frac(s.cutIns.shortPauses), '0'),
    row('premature cut-ins, tuning pauses (0.4-1.5 s)', 'behaviour', (s) => frac(s.cutIns.allPauses)),
    row('premature cut-ins, HELD-OUT pauses <= 1.5 s', 'behaviour', (s) => frac(s.heldOutCutIns.shortPauses), '0'),
    row('premature cut-ins, HELD-OUT pauses (0.9-2 s)', 'behaviour', (s) => frac(s.heldOutCutIns.allPauses)),
    row('... of which the bot spoke into the answer (audio), all pauses', 'behaviour', (s) => frac(s.audibleCutIns), '0'),
    row('premature cut-ins, plain and short answers', 'behaviour', (s) => frac(s.cutIns.plainAndShort), '0'),
    row('missed barge-ins (no interrupt within 1.5 s)', 'behaviour', (s) => frac(s.missedBargeIns), '0'),
    row('time to stop on barge-in', 'behaviour', (s) => p50p90(s.stopTimes), 'p90 < 200 ms'),
    row(
      'backchannels that paused or stopped the bot (a hum, uh-huh, yeah, okay, right, 150 ms noise)',
      'behaviour',
      (s) => frac(s.falseStops),
      '',
    ),
    row('... of which its voice never came back (stopped for good)', 'behaviour', (s) => frac(s.stoppedForGood), '0'),
    row('backchannels taken as the answer (bot went thinking)', 'behaviour', (s) => frac(s.backchannelsTakenAsTurn), '0'),
    [
      'CPU per session, VAD alone (in-process, share of one core)',
      pct(cpuToday.vad),
      pct(cpuNew.vad),
      pct(cpuNew.vad),
      ...(realLlm ? [pct(cpuNew.vad)] : []),
      '',
    ],
    [
      `CPU per session, VAD + turn model (model calls over ${cpuNew.audioSeconds.toFixed(0)} s of audio)`,
      `${pct(cpuToday.vadAndTurn)} (${cpuToday.modelCalls})`,
      `${pct(cpuNew.vadAndTurn)} (${cpuNew.modelCalls})`,
      'same',
      ...(realLlm ? ['same'] : []),
      '< 5%',
    ],
    [
      'CPU of the whole bot process during the behaviour session (/proc)',
      ...columns.map((c) => pct(outcomes.get(key(c, 'behaviour'))?.botCpu ?? NaN)),
      '',
    ],
  ],
  ['left', ...columns.map(() => 'right' as const), 'right'],
);

const waitColumn = (o: Outcome | undefined, show: (s: RunSummary) => string): string =>
  !o ? 'not run' : o.summary instanceof Error ? 'failed' : show(o.summary);
console.log(
  '\nthe first reaction to speech over the bot (new pipeline, behaviour session): a pause at a speech onset ' +
    '(BARGE_IN_PAUSE_MS=64, the default) vs once a turn has started (BARGE_IN_PAUSE_MS=0, before 2026-11-28):',
);
const onsetRows: Array<[string, (s: RunSummary) => string]> = [
  ['time to stop on barge-in', (s) => p50p90(s.stopTimes)],
  ['missed barge-ins', (s) => frac(s.missedBargeIns)],
  ['backchannels that paused or stopped the bot', (s) => frac(s.falseStops)],
  ['... of which its voice never came back', (s) => frac(s.stoppedForGood)],
  ['backchannels taken as the answer', (s) => frac(s.backchannelsTakenAsTurn)],
  [
    'premature cut-ins, all pauses (tuning + held-out)',
    (s) => `${s.cutIns.allPauses.count + s.heldOutCutIns.allPauses.count}/${s.cutIns.allPauses.of + s.heldOutCutIns.allPauses.of}`,
  ],
];
const onsetColumns: ColumnName[] = ['new', 'new-no-onset', 'new-livekit', 'new-livekit-no-onset'];
printTable(
  ['metric', 'local, onset', 'local, turn start', 'LiveKit, onset', 'LiveKit, turn start'],
  onsetRows.map(([metric, show]) => [metric, ...onsetColumns.map((c) => waitColumn(outcomes.get(key(c, 'behaviour')), show))]),
  ['left', 'right', 'right', 'right', 'right'],
);

console.log("\nthe language model's WAIT (new pipeline, local rooms, realistic profile; pause answers only):");
const waitRows: Array<[string, (s: RunSummary) => string]> = [
  ['premature cut-ins, tuning pauses <= 1.2 s', (s) => frac(s.cutIns.shortPauses)],
  ['premature cut-ins, tuning pauses, all', (s) => frac(s.cutIns.allPauses)],
  ['premature cut-ins, HELD-OUT pauses <= 1.5 s', (s) => frac(s.heldOutCutIns.shortPauses)],
  ['premature cut-ins, HELD-OUT pauses, all', (s) => frac(s.heldOutCutIns.allPauses)],
  ['... of which the bot spoke into the answer', (s) => frac(s.audibleCutIns)],
];
printTable(
  ['metric', 'stand-in never says WAIT', 'stand-in SCRIPTED to say WAIT at each pause', 'real language model'],
  waitRows.map(([metric, show]) => [
    metric,
    waitColumn(outcomes.get(key('new', 'behaviour')), show),
    waitColumn(outcomes.get(key('new', 'wait')), show),
    waitColumn(outcomes.get(key('new-real-llm', 'behaviour')), show),
  ]),
  ['left', 'right', 'right', 'right'],
);
console.log(
  "The scripted column is the script's judgement (it knows where every pause is), not a model's: it shows what WAIT can hold when the model judges right.",
);
console.log(
  realLlm
    ? `Real language model: ${realLlm.baseURL}${realLlm.model ? ` (${realLlm.model})` : ' (the worker default model)'}; speech stayed ` +
        `self-hosted and the voice the stand-in's.`
    : 'Real language model: did NOT run (OPENAI_API_KEY is not set); the "real language model" cells say "not run". ' +
        'Nothing in this table was judged by a real model.',
);

console.log('\nlatency profile "realistic" (time to the first byte of each answer, as the worker sees it):');
for (const line of REALISTIC_SOURCES) console.log(`- ${line}`);
console.log(
  sttRoute === 'speech-server'
    ? "Transcripts: the bot's speech-to-text is the self-hosted speech server itself (Moonshine, its defaults: " +
        "realtime buffers decoded in pieces while the respondent talks); the profiles' STT figures are NOT used, the " +
        'real decode is the latency.'
    : 'Transcripts (BENCH_TURNS_STT=stand-in): the stand-in sends each commit or upload whole to the self-hosted ' +
        "speech server (Moonshine); a profile's STT figure is the earliest time the transcript may arrive, the real " +
        'decode counting towards it (zero: as soon as it is decoded).',
);
console.log(
  'End of speech: when the respondent sent the 20 ms frame holding the last speech sample; first bot audio: the ' +
    'first audio frame received after it (LiveKit: the first audible frame out of the subscribed track). Latencies: ' +
    'plain and short answers the bot did not cut in on; paths told apart by the bot captions.',
);
for (const column of [...columns, 'new-no-onset', 'new-livekit-no-onset'] as ColumnName[]) {
  const o = outcomes.get(key(column, 'behaviour'));
  if (o && !(o.summary instanceof Error))
    console.log(
      `${column}: cut in on ${o.summary.ids.cutIn.join(', ') || 'none'}; missed ` +
        `${o.summary.ids.missed.join(', ') || 'none'}; paused or stopped on ` +
        `${o.summary.ids.falseStop.join(', ') || 'none'}; stopped for good on ` +
        `${o.summary.ids.stoppedForGood.join(', ') || 'none'}; stops ${o.summary.ids.stops.join(', ') || 'none'}`,
    );
}
const failed = [...outcomes.entries()].filter(([, o]) => o.summary instanceof Error).map(([k]) => k);
if (failed.length > 0) console.log(`failed sessions: ${failed.join(', ')} (see stderr)`);
process.exit(0);
