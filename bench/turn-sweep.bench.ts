import { join } from 'node:path';
import { startSpeechServer } from '../test/harness/speech-server.ts';
import { turnModelsDir } from '../test/harness/turn-models.ts';
import { TURN_POLICY_DEFAULTS, type Endpointing } from '../worker/bot/policy/turn-policy.ts';
import { loadTurnModels } from '../worker/bot/turns/models.ts';
import { buildAnswerSet, type AnswerItem } from './turns/answer-set.ts';
import { writeChartPng } from './turns/plot.ts';
import { REALISTIC } from './turns/profiles.ts';
import { ReplaySignals } from './turns/replay.ts';
import { measureWords, wordsRoute } from './turns/replay-words.ts';
import {
  detectorSettings,
  lengthClass,
  runPoint,
  summarizePoint,
  type PointSummary,
  type RouteProfile,
  type SweepPoint,
} from './turns/sweep.ts';
import { machineLine, printTable, ROOT } from './support.ts';

/**
 * The turn policy's trade-off (issue 40, step 4): the endpointing policy over a range of its main
 * setting, TURN_HOLD_MS (and of TURN_HOLD_MAX_WORDS at the default hold), on every answer of the
 * bench's set (bench/turns/answer-set.ts: 40 thinking pauses, 20 finished short answers, 22
 * finished longer ones; half of each held out), on both speech routes:
 * - hosted: the words of each pause arrive at the realistic profile's 150 ms after the commit;
 * - self-hosted: as the speech server here returned them, streamed in real time (replay-words.ts).
 * The detector is the bot's own, replayed in virtual time with the real Silero and Smart Turn
 * (bench/turns/replay.ts): the figures do not move with the machine's load, except the self-hosted
 * words' delays, measured once and cached (BENCH_TURNS_REMEASURE=1 measures them again).
 * The wait of a finished answer is modelled: the later of the turn's end and the words plus the
 * decision call's first token (300 ms, the realistic profile: the call starts on the pause's words
 * and the next question's voice is made ahead). turns.bench.ts measures the whole path for real.
 * Writes the curve as a PNG (BENCH_TURNS_PLOT, default docs/turn-policy-tradeoff.png).
 */
const HOLDS = [0, 600, 1000, 1400, 1800, 2000, 2200, 2400, 2800];
const HOLD_WORDS = [5, 7, 9];
const D = TURN_POLICY_DEFAULTS.endpointing;
const MODEL_MS = 120;

const log = (line: string) => console.log(line);
log(machineLine());
const set = buildAnswerSet();
const items: AnswerItem[] = [...set.pause, ...set.short, ...set.plain];
const models = await loadTurnModels({ vad: 'silero', detection: 'model', modelsDir: turnModelsDir() });
const signals = new ReplaySignals(models.vad!, models.turn!);
const base = { vadThreshold: TURN_POLICY_DEFAULTS.engines.vadSpeechThreshold, modelMs: MODEL_MS, language: 'en' };

const server = await startSpeechServer();
let words: Awaited<ReturnType<typeof measureWords>>;
try {
  words = await measureWords(items, signals, { ...base, settings: detectorSettings({ ...D }), wordsWaitMs: D.wordsWaitMs }, server, log);
} finally {
  await server.stop();
}
const selfDelays = [...words.values()].flatMap((w) => w.commits.map((c) => c.delayMs)).sort((a, b) => a - b);
log(
  `self-hosted words: ${selfDelays.length} commits, delay after the commit p50 ${selfDelays[Math.floor(selfDelays.length / 2)]} ms, ` +
    `p90 ${selfDelays[Math.floor(selfDelays.length * 0.9)]} ms (this machine, when measured)`,
);

const routes: RouteProfile[] = [
  { route: wordsRoute('hosted', words, REALISTIC.sttRealtimeFinalMs), replyMs: REALISTIC.llmFirstTokenMs },
  { route: wordsRoute('self-hosted', words), replyMs: REALISTIC.llmFirstTokenMs },
];

const points: SweepPoint[] = [
  ...HOLDS.map((holdMs) => ({ label: `TURN_HOLD_MS=${holdMs}`, endpointing: { ...D, holdMs } as Endpointing })),
  ...HOLD_WORDS.filter((n) => n !== D.holdMaxWords).map((holdMaxWords) => ({
    label: `TURN_HOLD_MAX_WORDS=${holdMaxWords}`,
    endpointing: { ...D, holdMaxWords } as Endpointing,
  })),
];

const summaries: PointSummary[] = [];
const started = Date.now();
for (const profile of routes) {
  for (const point of points) summaries.push(summarizePoint(await runPoint(point, profile, items, signals, base)));
}
log(
  `replayed ${points.length} settings x ${routes.length} routes x ${items.length} answers in ${Math.round((Date.now() - started) / 1000)} s`,
);

const frac = ([a, b]: [number, number]) => `${a}/${b}`;
const w = (x: number) => (Number.isFinite(x) ? String(Math.round(x)) : 'never');
for (const profile of routes) {
  log(`\n${profile.route.name} speech: talk-overs on thinking pauses against the wait of finished answers (ms, modelled)`);
  printTable(
    [
      'setting',
      'talk-overs <=2 s',
      'held-out <=2 s',
      'pauses >2 s',
      'cut short',
      'short p50',
      'short p90',
      '6-7 words p50',
      'long p50',
      'long p90',
    ],
    summaries
      .filter((s) => s.route === profile.route.name)
      .map((s) => [
        s.label === `TURN_HOLD_MS=${D.holdMs}` ? `${s.label} (default)` : s.label,
        frac(s.talkOvers.tuning),
        frac(s.talkOvers.heldOut),
        frac(s.talkOvers.over2s),
        s.cutShort,
        w(s.wait.short.p50),
        w(s.wait.short.p90),
        w(s.wait.middle.p50),
        w(s.wait.long.p50),
        w(s.wait.long.p90),
      ]),
  );
}

// The aims of issue 40 at the default, the stand-in never saying WAIT.
log('\naims at the defaults (endpointing and the modelled wait; turns.bench.ts measures the whole path)');
const at = (route: string) => summaries.find((s) => s.route === route && s.label === `TURN_HOLD_MS=${D.holdMs}`)!;
const aim = (what: string, value: string, met: boolean) => [what, value, met ? 'met' : 'NOT met'];
const hosted = at('hosted');
const self = at('self-hosted');
printTable(
  ['aim', 'measured', ''],
  [
    aim('hosted: 0 talk-overs, held-out pauses <= 2 s', frac(hosted.talkOvers.heldOut), hosted.talkOvers.heldOut[0] === 0),
    aim('self-hosted: 0 talk-overs, held-out pauses <= 2 s', frac(self.talkOvers.heldOut), self.talkOvers.heldOut[0] === 0),
    aim('hosted: long answers p50 < 800 ms', w(hosted.wait.long.p50), hosted.wait.long.p50 < 800),
    aim('hosted: long answers p90 < 1200 ms', w(hosted.wait.long.p90), hosted.wait.long.p90 < 1200),
    aim('self-hosted: long answers p50 < 1200 ms', w(self.wait.long.p50), self.wait.long.p50 < 1200),
    aim('hosted: short answers p90 <= 2500 ms', w(hosted.wait.short.p90), hosted.wait.short.p90 <= 2500),
    aim('self-hosted: short answers p90 <= 2500 ms', w(self.wait.short.p90), self.wait.short.p90 <= 2500),
    aim('held-out long answers p50 (hosted / self-hosted)', `${w(hosted.heldOutWait.long.p50)} / ${w(self.heldOutWait.long.p50)}`, true),
  ],
);

if (process.env.BENCH_TURNS_ITEMS === '1') {
  for (const profile of routes) {
    const result = await runPoint(
      points.find((p) => p.label === `TURN_HOLD_MS=${D.holdMs}`)!,
      profile,
      items,
      signals,
      base,
    );
    for (const r of result.items) {
      log(
        `${profile.route.name} ${r.item.id} ${r.item.question} ${lengthClass(r.item)} end ${r.outcome.reason ?? 'none'}${r.outcome.held ? ' held' : ''} ` +
          `${r.talkOver ? 'TALK-OVER ' : ''}decision ${w(r.decisionMs ?? NaN)} wait ${w(r.waitMs ?? NaN)}`,
      );
    }
  }
}

const file = process.env.BENCH_TURNS_PLOT ?? join(ROOT, 'docs', 'turn-policy-tradeoff.png');
const colours: Record<string, string> = { hosted: '#1f77b4', 'self-hosted': '#d62728' };
const upTo2s = set.pause.filter((i) => Math.max(...i.pauses.map((p) => p.endMs - p.startMs)) <= 2000).length;
await writeChartPng(
  {
    title: 'Turn policy: talk-overs on thinking pauses vs the wait of finished short answers',
    xLabel: 'finished short answers (1-5 words), p90 wait after the end of speech (ms, modelled)',
    yLabel: `talk-overs on the ${upTo2s} pauses of at most 2 s (both halves)`,
    guides: [{ axis: 'x', at: 2500, label: 'aim: p90 <= 2.5 s' }],
    series: routes.map((profile) => ({
      name: `${profile.route.name} speech`,
      colour: colours[profile.route.name]!,
      points: summaries
        .filter((s) => s.route === profile.route.name && s.label.startsWith('TURN_HOLD_MS='))
        .map((s) => ({
          x: s.wait.short.p90,
          y: s.talkOvers.tuning[0] + s.talkOvers.heldOut[0],
          label: s.label.replace('TURN_HOLD_MS=', ''),
          marked: s.label === `TURN_HOLD_MS=${D.holdMs}`,
        })),
    })),
  },
  file,
);
log(`\nplot: ${file}`);
process.exit(0);
