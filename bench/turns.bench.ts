import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOtlpReceiver, type ReceivedSpan } from '../test/fakes/otlp-receiver.ts';
import { startSpeechServer } from '../test/harness/speech-server.ts';
import { startRedis } from '../test/harness/redis.ts';
import { turnModelsDir } from '../test/harness/turn-models.ts';
import { startFakeBackend } from '../test/worker/harness.ts';
import { buildAnswerSet, type AnswerItem } from './turns/answer-set.ts';
import { detectorCpu } from './turns/cpu.ts';
import { summarize, type Ratio, type RunSummary } from './turns/metrics.ts';
import { REALISTIC, REALISTIC_SOURCES, ZERO, type LatencyProfile } from './turns/profiles.ts';
import { NEW as NEW_DEFAULTS, runSession, TODAY, type Pipeline } from './turns/session.ts';
import { machineLine, ms, percentile, printTable } from './support.ts';

/**
 * Turn-taking, today's pipeline (energy VAD, 700 ms of silence, batch STT, no barge-in) and the new
 * one (the defaults: Silero VAD, Smart Turn, realtime STT, barge-in) side by side in one run, each
 * in a real worker process with local rooms, the stand-in language model and voice under two
 * latency profiles, and a respondent speaking the answer set (the Piper voice, a few espeak-ng) in
 * real time (bench/turns/). What the respondent says is heard by the real recogniser: the
 * self-hosted speech server (started once here) behind the stand-in, whose profile sets the
 * earliest time a transcript may arrive. Issue 13's aims are the last column.
 * BENCH_TURNS_QUICK=1 says a third of the set (a smoke run, not for docs).
 */
const quick = process.env.BENCH_TURNS_QUICK === '1';
const set = buildAnswerSet();
const by = (id: string): AnswerItem => {
  const found = Object.values(set).flat().find((i) => i.id === id || i.id.startsWith(`${id}-`));
  if (!found) throw new Error(`no answer item ${id}`);
  return found;
};
// Kinds interleaved; a backchannel rides on the question its following answer replies to, an
// interruption is the answer to the question it interrupts.
const FULL = [
  'plain-1', 'pause-1', 'short-1', 'backchannel-1', 'plain-2', 'pause-2', 'interruption-1', 'plain-3', 'pause-3', 'noise-2', 'short-2', 'pause-4',
  'plain-4', 'interruption-2', 'pause-5', 'backchannel-3', 'plain-5', 'pause-6', 'short-3', 'plain-6', 'interruption-3', 'pause-7', 'noise-4', 'plain-7',
  'pause-8', 'plain-8', 'pause-9', 'plain-9', 'pause-10', 'plain-10',
].map(by);
// Latency only: plain and short answers, nothing during the bot's speech.
const LATENCY_ONLY = ['plain-1', 'short-1', 'plain-2', 'plain-3', 'short-2', 'plain-4', 'plain-5', 'short-3', 'plain-6', 'plain-7', 'plain-8', 'plain-9', 'plain-10'].map(by);
// The new pipeline's model files, fetched once (scripts/turn-models.sh), for the worker and for the CPU measure.
const modelsDir = turnModelsDir();
const NEW: Pipeline = { ...NEW_DEFAULTS, env: { ...NEW_DEFAULTS.env, TURN_MODELS_DIR: modelsDir } };
const cut = <T>(xs: T[]): T[] => (quick ? xs.slice(0, Math.ceil(xs.length / 3)) : xs);

interface Column {
  zero: RunSummary | Error;
  realistic: RunSummary | Error;
  botCpu: number;
  /** The worker's spans of the realistic session. */
  spans: ReceivedSpan[];
}

console.log(`${machineLine()} (shared machine: tails move with it)`);
// One speech server for every session: its recogniser (about 0.7 GB) loads once.
const speech = await startSpeechServer({}, join(mkdtempSync(join(tmpdir(), 'bench-turns-')), 'logs'));
const redis = await startRedis();
const backend = await startFakeBackend();
const otlp = await startOtlpReceiver();
const columns = new Map<Pipeline['name'], Column>();
try {
  for (const pipeline of [TODAY, NEW]) columns.set(pipeline.name, { zero: new Error('not run'), realistic: new Error('not run'), botCpu: NaN, spans: [] });
  const run = async (pipeline: Pipeline, profile: LatencyProfile, items: AnswerItem[]) => {
    const column = columns.get(pipeline.name)!;
    try {
      const result = await runSession(pipeline, profile, items, { redisUrl: redis.url, backendUrl: backend.url, otlp, recogniser: { url: speech.url, token: speech.token } });
      column[profile.name] = summarize(result.timeline.plays, result.timeline.events);
      if (profile.name === 'realistic') {
        column.botCpu = result.botCpuShare;
        column.spans = result.spans;
      }
      console.error(`${pipeline.name}/${profile.name}: ${result.timeline.plays.length} items in ${result.seconds.toFixed(0)} s`);
    } catch (err) {
      column[profile.name] = err as Error;
      console.error(String((err as Error).message));
    }
  };
  // Alternating, so that a change in the machine's load hits both pipelines alike.
  for (const pipeline of [TODAY, NEW]) await run(pipeline, ZERO, cut(LATENCY_ONLY));
  for (const pipeline of [TODAY, NEW]) await run(pipeline, REALISTIC, cut(FULL));
} finally {
  await backend.close();
  await otlp.close();
  await redis.stop();
  await speech.stop();
}

const everything = Object.values(set).flat();
const cpuToday = await detectorCpu(everything, TODAY.env, null);
const cpuNew = await detectorCpu(everything, NEW.env, modelsDir);
const p = (q: number) => (s: RunSummary) => ms(percentile(s.latencies, q));
const frac = (r: Ratio): string => `${r.count}/${r.of}`;
const pct = (x: number): string => (Number.isNaN(x) ? 'n/a' : `${(x * 100).toFixed(x < 0.1 ? 2 : 1)}%`);
const cell = (pipeline: Pipeline, profile: 'zero' | 'realistic', show: (s: RunSummary) => string): string => {
  const s = columns.get(pipeline.name)![profile];
  return s instanceof Error ? 'failed' : show(s);
};
const row = (metric: string, profile: 'zero' | 'realistic', show: (s: RunSummary) => string, aim: string): string[] => [metric, cell(TODAY, profile, show), cell(NEW, profile, show), aim];
// Where a turn's time goes, from the worker's own spans (realistic session).
const spanMs = (s: ReceivedSpan): number => Number(s.endNs - s.startNs) / 1e6;
const spansOf = (pipeline: Pipeline, name: string): ReceivedSpan[] => columns.get(pipeline.name)!.spans.filter((s) => s.name === name);
const spanP50 = (name: string) => (pipeline: Pipeline): string => ms(percentile(spansOf(pipeline, name).map(spanMs), 50));
const reasons = (pipeline: Pipeline): string => {
  const counts = new Map<string, number>();
  for (const s of spansOf(pipeline, 'turn.end')) counts.set(String(s.attributes['turn.end_reason']), (counts.get(String(s.attributes['turn.end_reason'])) ?? 0) + 1);
  return counts.size === 0 ? 'n/a' : [...counts].map(([k, v]) => `${k} ${v}`).join(', ');
};
const spanRow = (metric: string, show: (pipeline: Pipeline) => string, aim = ''): string[] => [metric, show(TODAY), show(NEW), aim];
const ownShare = (pipeline: Pipeline) => (s: RunSummary) => ms(percentile(s.latencies, 50) - pipeline.endOfTurnWaitMs);

console.log(`\nturn-taking: today (${Object.entries(TODAY.env).map(([k, v]) => `${k}=${v}`).join(' ')}) vs new (defaults); a real worker, local rooms, the stand-in language model and voice, speech heard by the self-hosted recogniser; ${quick ? 'QUICK run (a third of the set)' : 'the full answer set'}`);
printTable(
  ['metric', 'today', 'new', 'aim'],
  [
    row('end of speech -> first bot audio, realistic profile, p50', 'realistic', p(50), '< 600 ms'),
    row('end of speech -> first bot audio, realistic profile, p90', 'realistic', p(90), ''),
    row('end of speech -> first bot audio, zero profile, p50', 'zero', p(50), ''),
    row('end of speech -> first bot audio, zero profile, p90', 'zero', p(90), ''),
    [`system's own share (zero p50 minus the end-of-turn wait: ${TODAY.endOfTurnWaitMs} / ${NEW.endOfTurnWaitMs} ms)`, cell(TODAY, 'zero', ownShare(TODAY)), cell(NEW, 'zero', ownShare(NEW)), '< 30 ms'],
    spanRow("bot's end of speech -> turn decided (turn.end span), p50", spanP50('turn.end')),
    spanRow('turns ended by (turn.end reason)', reasons),
    spanRow('turn decided -> final transcript (stt.final span), p50', spanP50('stt.final')),
    row('premature cut-ins, pauses <= 1.2 s', 'realistic', (s) => frac(s.cutIns.shortPauses), '0'),
    row('premature cut-ins, all pauses (0.4-1.5 s)', 'realistic', (s) => frac(s.cutIns.allPauses), ''),
    row('... of which the bot spoke into the answer (audio), all pauses', 'realistic', (s) => frac(s.audibleCutIns), '0'),
    row('premature cut-ins, plain and short answers', 'realistic', (s) => frac(s.cutIns.plainAndShort), '0'),
    row('missed barge-ins (no interrupt within 1.5 s)', 'realistic', (s) => frac(s.missedBargeIns), '0'),
    row('time to stop on barge-in, p50', 'realistic', (s) => ms(percentile(s.stopTimes, 50)), '< 250 ms'),
    row('time to stop on barge-in, p90', 'realistic', (s) => ms(percentile(s.stopTimes, 90)), '< 250 ms'),
    row('false stops on backchannels (mhm, uh-huh, 150 ms noise)', 'realistic', (s) => frac(s.falseStops), '0'),
    row('backchannels taken as the answer (bot went thinking)', 'realistic', (s) => frac(s.backchannelsTakenAsTurn), '0'),
    ['CPU per session, VAD alone (in-process, share of one core)', pct(cpuToday.vad), pct(cpuNew.vad), ''],
    [`CPU per session, VAD + turn model (model calls over ${cpuNew.audioSeconds.toFixed(0)} s of audio)`, `${pct(cpuToday.vadAndTurn)} (${cpuToday.modelCalls})`, `${pct(cpuNew.vadAndTurn)} (${cpuNew.modelCalls})`, '< 5%'],
    ['CPU of the whole bot process during the realistic session (/proc)', pct(columns.get('today')!.botCpu), pct(columns.get('new')!.botCpu), ''],
  ],
  ['left', 'right', 'right', 'right'],
);
console.log('\nlatency profile "realistic" (time to the first byte of each answer, as the worker sees it):');
for (const line of REALISTIC_SOURCES) console.log(`- ${line}`);
console.log('Transcripts: the self-hosted speech server (Moonshine) hears every answer; a profile\'s STT figure is the earliest time the transcript may arrive after the commit or upload, the real decode counting towards it (zero: as soon as it is decoded).');
console.log('End of speech: when the respondent sent the 20 ms frame holding the last speech sample; first bot audio: the first audio frame received after it. Latencies: plain and short answers the bot did not cut in on.');
for (const pipeline of [TODAY, NEW]) {
  const s = columns.get(pipeline.name)!.realistic;
  if (!(s instanceof Error)) console.log(`${pipeline.name}: cut in on ${s.ids.cutIn.join(', ') || 'none'}; missed ${s.ids.missed.join(', ') || 'none'}; false stops on ${s.ids.falseStop.join(', ') || 'none'}`);
}
const failed = [...columns.entries()].flatMap(([name, c]) => (['zero', 'realistic'] as const).filter((k) => c[k] instanceof Error).map((k) => `${name}/${k}`));
if (failed.length > 0) console.log(`failed sessions: ${failed.join(', ')} (see stderr)`);
process.exit(0);
