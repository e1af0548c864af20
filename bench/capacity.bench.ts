import { startLiveKitServer, type LiveKitServer } from '../test/harness/livekit-server.ts';
import { runLiveKitRespondent, type LiveKitRespondentResult } from '../test/harness/livekit-respondent.ts';
import { startRedis } from '../test/harness/redis.ts';
import { turnModelsDir } from '../test/harness/turn-models.ts';
import { baseEnv, spawnBody, startFakeBackend, startWorkerProcess, waitIdleSlots, type WorkerProcess } from '../test/worker/harness.ts';
import { summariseProfiles } from './capacity/cpu-profiles.ts';
import { describeScores, scoreAnswers } from './capacity/decisive-answers.ts';
import { threadCpuDelta, threadCpuSeconds } from './capacity/thread-cpu.ts';
import { createPodCgroup, machineJiffies, pssBytes, type PodCgroup } from './capacity/pod-cgroup.ts';
import { cpuSecondsOf, fmt, machineLine, median, ms, percentile, printTable, startServerProcess } from './support.ts';
import { buildAnswerSet, type AnswerItem } from './turns/answer-set.ts';
import { fakeProfile, REALISTIC, REALISTIC_SOURCES } from './turns/profiles.ts';

/**
 * How many live interviews one worker pod holds (issue 22). One worker confined like a pod (a
 * cgroup with its CPU quota and memory limit: BENCH_CAPACITY_CPUS, BENCH_CAPACITY_MEMORY_MIB),
 * LiveKit rooms through a real livekit-server, the stand-in providers with the realistic latency
 * profile, and N respondents (rtc-node, in this process, outside the pod's cgroup) who really
 * talk: the Piper and espeak-ng answers of the turn bench, thinking pauses included, and a
 * barge-in in every other interview. N ramps (BENCH_CAPACITY_STEPS); each step is a fresh worker
 * with N warm slots. The ramp runs once per design, in the same run (BENCH_CAPACITY_PER_PROCESS,
 * default `1,4`): BOT_SESSIONS_PER_PROCESS=1 is today's default (one bot process per slot and per
 * interview), 4 puts up to four sessions in one bot process sharing its runtime and models, with the
 * turn models on the bot's main thread (the default) or, with `:thread` (`4:thread`), in threads of
 * their own (TURN_MODEL_THREAD). Per step: CPU and
 * memory from the cgroup's own accounting, per live interview and per idle warm slot; end of speech
 * to first bot audio; silences heard inside the bot's utterances; failed interviews. The pod's
 * capacity is the largest N whose p95 turn latency stays within 10% of N=1, with no more audio gaps
 * per interview than at N=1 and no failure.
 *
 * The respondents' speech reaches the worker as audio; the stand-in's transcripts are placeholders
 * (the self-hosted speech server's cost is its own pod's, measured by bench/speech.bench.ts).
 */
const MiB = 2 ** 20;
const STEPS = (process.env.BENCH_CAPACITY_STEPS ?? '1,2,4,8,12,16').split(',').map(Number);
/** A design compared: sessions per bot process (BOT_SESSIONS_PER_PROCESS), and where the turn models run (TURN_MODEL_THREAD). */
interface Design {
  perProcess: number;
  modelThread: boolean;
}
const DESIGNS: Design[] = (process.env.BENCH_CAPACITY_PER_PROCESS ?? '1,4').split(',').map((entry) => {
  const [k, where] = entry.trim().split(':');
  const perProcess = Number(k);
  if (!Number.isInteger(perProcess) || perProcess < 1 || (where !== undefined && where !== 'thread')) {
    throw new Error(`BENCH_CAPACITY_PER_PROCESS: "${entry}" is not <sessions per process>[:thread]`);
  }
  return { perProcess, modelThread: where === 'thread' };
});
const POD = {
  cpus: Number(process.env.BENCH_CAPACITY_CPUS ?? 1),
  memoryBytes: Number(process.env.BENCH_CAPACITY_MEMORY_MIB ?? 2048) * MiB,
};
/** The spec's sample pod, to which the measured figures are scaled. */
const SAMPLE_POD = { cpus: 2, memoryBytes: 4096 * MiB };
/**
 * Questions per interview, each answered with a plain answer: the stand-in's transcripts are
 * placeholders, so a thinking pause would be judged without its words and the bot would cut in
 * (bench/turns.bench.ts measures pauses with the real recogniser); a pause costs the bot less CPU
 * than speech anyway. Only the answers whose end the turn model recognises with a margin
 * (bench/capacity/decisive-answers.ts), so that latency moves with load, not with the model's doubts.
 */
const QUESTIONS = 6;
/**
 * N=1 runs this many interviews one after another, and N < ROUNDS ceil(ROUNDS / N) rounds, so that every
 * step's latency percentiles rest on about as many turns (N=1: 4 x 6 answers).
 */
const ROUNDS = Number(process.env.BENCH_CAPACITY_ROUNDS ?? 4);
const roundsAt = (n: number): number => Math.max(1, Math.ceil(ROUNDS / n));
/** A folder: the worker and its bots write V8 CPU profiles there (--cpu-prof), summarised after the table. */
const PROFILE_DIR = process.env.BENCH_CAPACITY_CPU_PROFILE;
/** Interviews start this far apart, so that their turns do not all fall on the same moments. */
const STAGGER_MS = 700;
const LATENCY_SLACK = 1.1;
/** Above this share of the whole machine busy, a failed step says more about the machine (respondents, livekit-server) than about the pod. */
const MACHINE_SATURATED = 0.9;
let cgroupVersion = 0;

interface Step {
  n: number;
  /** BOT_SESSIONS_PER_PROCESS of the step's worker, and whether its turn models ran in threads. */
  perProcess: number;
  modelThread: boolean;
  /** Idle pool: the pod's CPU (share of one core) per warm slot, and memory. */
  idleCpuPerSlot: number;
  idlePodBytes: number;
  workerPss: number;
  idleBotPss: number[];
  /** All N live: the pod's CPU (share of one core) per live interview, and memory. */
  liveSeconds: number;
  liveCpuPerInterview: number;
  livePodBytes: number;
  liveBotPss: number[];
  /** The whole machine's busy share while all N were live (respondents, livekit-server, providers included). */
  machineBusy: number;
  /** Share of the CFS periods in the live window in which the pod used up its quota. */
  throttled: number;
  latencies: number[];
  /** The same latencies by turn: the answer and the question it answered (`<answer id>@q<k>`), for the paired comparison. */
  turns: Array<{ key: string; ms: number }>;
  gapsMs: number[];
  completed: number;
  /** Interviews run (N x roundsAt(N)). */
  interviews: number;
  failures: string[];
  memoryLimitHits: number;
  /** Live window: the bots' CPU by thread name, and the worker process's own, per live interview (share of one core). */
  threads: Map<string, number>;
  workerCpuPerInterview: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sum = (xs: number[]): number => (xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0));
const mib = (bytes: number): string => (Number.isNaN(bytes) ? 'n/a' : `${fmt(bytes / MiB, 0)} MiB`);
const pct = (share: number): string => (Number.isNaN(share) ? 'n/a' : `${fmt(share * 100, 1)}%`);

/**
 * The answers of the g-th interview of a step (counted over its rounds), question by question. Every
 * step speaks the same answers in the same places for the same g, so steps compare turn by turn.
 */
function answersFor(g: number, answers: readonly AnswerItem[]): AnswerItem[] {
  return Array.from({ length: QUESTIONS }, (_, k) => answers[(g + k) % answers.length]!);
}

/** End of each answer -> the first audible frame of the bot's next utterance (interruptions left out), by turn. */
function turnLatencies(r: LiveKitRespondentResult, spoken: readonly AnswerItem[]): Array<{ key: string; ms: number }> {
  return r.answers
    .filter((a) => !a.interruption)
    .flatMap((a, k) => {
      const next = r.botUtterances.find((u) => u.firstAudio > a.finished);
      return next ? [{ key: `${spoken[k]!.id}@q${k + 1}`, ms: next.firstAudio - a.finished }] : [];
    });
}

/**
 * Median over the turns both steps ran (the same answer to the same question) of this step's latency
 * minus the baseline's: the load's own cost, free of which answers happened to be slow.
 */
function pairedShift(step: Step, base: Step): number {
  const byKey = (s: Step) => {
    const m = new Map<string, number[]>();
    for (const t of s.turns) m.set(t.key, [...(m.get(t.key) ?? []), t.ms]);
    return new Map([...m].map(([k, xs]) => [k, sum(xs) / xs.length]));
  };
  const b = byKey(base);
  return median([...byKey(step)].filter(([k]) => b.has(k)).map(([k, ms]) => ms - b.get(k)!));
}

function interview(): Record<string, unknown> {
  return {
    title: 'Capacity bench',
    language: 'en',
    intro: 'Hi, thanks for joining.',
    questions: Array.from({ length: QUESTIONS }, (_, i) => ({
      id: `q${i + 1}`,
      text: `Question ${i + 1}: tell me a little about how your team has used the product lately.`,
      maxFollowUps: 0,
    })),
    closing: 'Thanks, bye.',
  };
}

async function measure(
  n: number,
  d: Design,
  deps: {
    livekit: LiveKitServer;
    redisUrl: string;
    backendUrl: string;
    llmUrl: string;
    modelsDir: string;
    set: ReturnType<typeof buildAnswerSet>;
    answers: readonly AnswerItem[];
  },
): Promise<Step> {
  const { perProcess } = d;
  const pod: PodCgroup = createPodCgroup(`voice-capacity-${process.pid}-${perProcess}${d.modelThread ? 't' : ''}-${n}`, POD);
  cgroupVersion = pod.version;
  let worker: WorkerProcess | undefined;
  try {
    worker = await startWorkerProcess(
      baseEnv({
        redisUrl: deps.redisUrl,
        backendUrl: deps.backendUrl,
        llmUrl: deps.llmUrl,
        ...deps.livekit.env,
        REDIS_KEY_PREFIX: `bench-capacity-${perProcess}-${n}-${Date.now()}`,
        WARM_POOL_SIZE: String(n),
        BOT_SESSIONS_PER_PROCESS: String(perProcess),
        TURN_MODEL_THREAD: String(d.modelThread),
        IDLE_TIMEOUT_SECONDS: '60',
        JOIN_TIMEOUT_SECONDS: '60',
        PROVIDER_TIMEOUT_MS: '60000',
        VAD_SILENCE_MS: '700',
        TURN_MODELS_DIR: deps.modelsDir,
        MAX_SESSION_SECONDS: '600',
        ...(PROFILE_DIR ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${PROFILE_DIR}` } : {}),
      }),
    );
    // At once, before the worker forks its first bot: every bot then starts inside the pod.
    pod.add(worker.proc.pid!);
    await worker.waitReady(60_000 + n * 5000);
    await waitIdleSlots(worker, n, 60_000 + n * 10_000);
    const w = worker;
    const outside = w.botPids().filter((pid) => !pod.holds(pid));
    if (outside.length > 0 || !pod.holds(w.proc.pid!))
      throw new Error(`processes outside the pod's cgroup: worker ${pod.holds(w.proc.pid!) ? 'in' : 'out'}, bots ${outside.join(', ')}`);

    // The idle pool, settled.
    await sleep(5000);
    const idle0 = { cpu: pod.cpuSeconds(), t: performance.now() };
    await sleep(10_000);
    const idleCpuPerSlot = (pod.cpuSeconds() - idle0.cpu) / ((performance.now() - idle0.t) / 1000) / n;
    const idlePodBytes = pod.memoryBytes();
    const workerPss = pssBytes(w.proc.pid!);
    const idleBotPss = w.botPids().map(pssBytes);

    // N interviews, staggered; the window where all N are live is measured.
    const failures: string[] = [];
    let joined = 0;
    let open: {
      t: number;
      cpu: number;
      jiffies: { busy: number; total: number };
      bots: number[];
      threads: Map<string, number>;
      workerCpu: number;
      throttling: { periods: number; throttled: number };
    } | null = null;
    let window: { seconds: number; cpu: number; busy: number; threads: Map<string, number>; workerCpu: number; throttled: number } | null =
      null;
    let live: { pod: number; bots: number[] } | null = null;
    const closeWindow = (): void => {
      if (window || !open) return;
      const j = machineJiffies();
      window = {
        seconds: (performance.now() - open.t) / 1000,
        cpu: pod.cpuSeconds() - open.cpu,
        busy: (j.busy - open.jiffies.busy) / (j.total - open.jiffies.total),
        threads: threadCpuDelta(open.threads, threadCpuSeconds(open.bots)),
        workerCpu: cpuSecondsOf(w.proc.pid!) - open.workerCpu,
        throttled: (() => {
          const t = pod.throttling();
          return (t.throttled - open.throttling.throttled) / Math.max(1, t.periods - open.throttling.periods);
        })(),
      };
    };
    const allLive = (): void => {
      const bots = w.botPids();
      open = {
        t: performance.now(),
        cpu: pod.cpuSeconds(),
        jiffies: machineJiffies(),
        bots,
        threads: threadCpuSeconds(bots),
        workerCpu: cpuSecondsOf(w.proc.pid!),
        throttling: pod.throttling(),
      };
      // Memory a few seconds in, every interview talking.
      setTimeout(() => {
        if (!window) live = { pod: pod.memoryBytes(), bots: w.botPids().map(pssBytes) };
      }, 3000);
    };
    const interviews = (round: number) =>
      Promise.all(
        Array.from({ length: n }, async (_, i): Promise<{ result: LiveKitRespondentResult; spoken: AnswerItem[] } | null> => {
          await sleep(i * STAGGER_MS);
          // The interview's place in the step: its answers and whether it barges in follow it, not the slot.
          const g = i + round * n;
          const spoken = answersFor(g, deps.answers);
          const res = await w.spawnSession(spawnBody({ interview: interview() }));
          if (res.status !== 200) {
            failures.push(`round ${round + 1}, spawn ${i + 1}: ${res.status} ${JSON.stringify(res.body)}`);
            return null;
          }
          const interruption = deps.set.interruption[g % deps.set.interruption.length]!;
          let counted = false;
          let bargedIn = false;
          try {
            const result = await runLiveKitRespondent({
              url: String(res.body.room_url),
              token: String(res.body.token),
              answers: spoken.map((a) => a.pcm),
              reactionMs: 300,
              timeoutMs: 300_000,
              // A barge-in in every other interview, 1 s into the question after the second answer.
              interruptAt: (_, answered) => {
                if (g % 2 !== 0 || answered !== 2 || bargedIn) return null;
                bargedIn = true;
                return { pcm: interruption.pcm, afterMs: 1000 };
              },
              onEvent: (line) => {
                // Live: the bot has asked its first question and listens.
                if (line !== 'state listening' || counted || round > 0) return;
                counted = true;
                if (++joined === n) allLive();
              },
            });
            if (result.ended !== 'completed')
              failures.push(
                `round ${round + 1}, interview ${i + 1}: ended ${result.ended ?? 'without an end message'} (${result.disconnectedBy})`,
              );
            return { result, spoken };
          } finally {
            closeWindow();
          }
        }),
      );
    const results: Array<{ result: LiveKitRespondentResult; spoken: AnswerItem[] } | null> = [];
    for (let round = 0; round < roundsAt(n); round++) {
      if (round > 0) await waitIdleSlots(w, n, 60_000);
      results.push(...(await interviews(round)));
    }
    const done = results.filter((r) => r !== null);
    const turns = done.flatMap(({ result, spoken }) => turnLatencies(result, spoken));
    const win = window as {
      seconds: number;
      cpu: number;
      busy: number;
      threads: Map<string, number>;
      workerCpu: number;
      throttled: number;
    } | null;
    const mem = live as { pod: number; bots: number[] } | null;
    return {
      n,
      perProcess,
      modelThread: d.modelThread,
      idleCpuPerSlot,
      idlePodBytes,
      workerPss,
      idleBotPss,
      liveSeconds: win?.seconds ?? NaN,
      liveCpuPerInterview: win ? win.cpu / win.seconds / n : NaN,
      livePodBytes: mem?.pod ?? NaN,
      liveBotPss: mem?.bots ?? [],
      machineBusy: win?.busy ?? NaN,
      throttled: win?.throttled ?? NaN,
      latencies: turns.map((t) => t.ms),
      turns,
      gapsMs: done.flatMap(({ result }) => result.gapsMs),
      completed: done.filter(({ result }) => result.ended === 'completed').length,
      interviews: results.length,
      failures,
      memoryLimitHits: pod.memoryLimitHits(),
      threads: new Map([...(win?.threads ?? [])].map(([name, seconds]) => [name, seconds / win!.seconds / n])),
      workerCpuPerInterview: win ? win.workerCpu / win.seconds / n : NaN,
    };
  } finally {
    // A profile is written at a clean exit: drain (SIGTERM) first, then the group's SIGKILL.
    if (PROFILE_DIR && worker) {
      worker.proc.kill('SIGTERM');
      await Promise.race([worker.exited, sleep(20_000)]);
      await sleep(2000);
    }
    await worker?.stop();
    await sleep(500);
    try {
      pod.remove();
    } catch (err) {
      console.error(`could not remove the step's cgroup: ${(err as Error).message}`);
    }
  }
}

console.log(`${machineLine()} (the respondents, livekit-server and the stand-in providers share this machine with the pod)`);
const set = buildAnswerSet();
const modelsDir = turnModelsDir();
const scored = await scoreAnswers(set.plain, modelsDir);
const answers = scored.filter((a) => a.decisive).map((a) => a.item);
if (answers.length < 3)
  throw new Error(
    `only ${answers.length} of the plain answers are decisive for the end-of-turn model; the capacity bench needs 3 (${describeScores(scored)})`,
  );
const livekit = await startLiveKitServer();
const redis = await startRedis();
const backend = await startFakeBackend();
const fake = await startServerProcess('bench/servers/fake-openai-server.ts', {
  FAKE_OPENAI_OPTIONS: JSON.stringify({ voice: 'tone', profile: fakeProfile(REALISTIC) }),
});
const designs: Step[][] = [];
try {
  for (const d of DESIGNS) {
    const steps: Step[] = [];
    designs.push(steps);
    for (const n of STEPS) {
      const step = await measure(n, d, {
        livekit,
        redisUrl: redis.url,
        backendUrl: backend.url,
        llmUrl: `http://127.0.0.1:${fake.port}/v1`,
        modelsDir,
        set,
        answers,
      });
      steps.push(step);
      console.error(
        `${designName(step)}, N=${n}: ${step.completed}/${step.interviews} completed, p95 ${ms(percentile(step.latencies, 95))}, ` +
          `${step.gapsMs.length} gaps, ${step.failures.length} failures${step.failures.length ? `: ${step.failures.join('; ')}` : ''}`,
      );
      // Go on past a step that lost only on gaps (shown, and counted in the verdict); stop where
      // latency, failures or the machine say the next step would only be worse.
      const base = steps[0]!;
      if (
        steps.length > 1 &&
        (step.failures.length > 0 ||
          percentile(step.latencies, 95) > LATENCY_SLACK * percentile(base.latencies, 95) ||
          step.machineBusy >= MACHINE_SATURATED)
      )
        break;
    }
  }
} finally {
  await fake.stop();
  await backend.close();
  await redis.stop();
  await livekit.stop();
}

function passes(step: Step, base: Step): boolean {
  const gapsPer = (s: Step) => s.gapsMs.length / s.interviews;
  return (
    step.failures.length === 0 &&
    step.completed === step.interviews &&
    percentile(step.latencies, 95) <= LATENCY_SLACK * percentile(base.latencies, 95) &&
    gapsPer(step) <= gapsPer(base)
  );
}

function designName(s: Pick<Step, 'perProcess' | 'modelThread'>): string {
  return `${s.perProcess} per process, turn models ${s.modelThread ? 'in threads' : 'on the main thread'}`;
}
function design(s: Pick<Step, 'perProcess' | 'modelThread'>): string {
  const where = s.modelThread ? 'the turn models in threads of their own (TURN_MODEL_THREAD)' : "the turn models on the bot's main thread";
  return s.perProcess === 1
    ? `${s.modelThread ? 'one bot process per warm slot' : "today's design (one bot process per warm slot and per interview)"}, ${where}`
    : `${s.perProcess} sessions per bot process (BOT_SESSIONS_PER_PROCESS=${s.perProcess}: one runtime and one copy ` +
        `of the models for up to ${s.perProcess} interviews; a crash ends up to ${s.perProcess}), ${where}`;
}
console.log(
  `\npod = cgroup of ${POD.cpus} CPU and ${mib(POD.memoryBytes)} (cgroup v${cgroupVersion}), LiveKit rooms, ` +
    `stand-in providers (realistic profile), ${QUESTIONS} questions per interview (${ROUNDS} rounds at N=1, ` +
    `ceil(${ROUNDS}/N) below N=${ROUNDS}, one after another), respondents started ${STAGGER_MS} ms apart`,
);
/** failedBelow: smaller steps that did not hold (a verdict that is not monotone in N is noise at that size, and says so). */
const capacities: Array<{ capacity: Step; reachedEnd: boolean; failedBelow: number[] }> = [];
for (const steps of designs) {
  const base = steps[0]!;
  console.log(`\ncapacity of one worker pod, ${design(base)}:`);
  printTable(
    [
      'N live',
      'completed',
      'CPU / live interview',
      'CPU / idle slot',
      'pod memory live / N',
      "bots' PSS / live interview",
      "bots' PSS / idle slot",
      'worker PSS',
      'turn p50',
      'turn p95',
      'Δ same turns vs N=1',
      'gaps / interview (p50, max)',
      'quota used up (periods)',
      'machine busy',
      'verdict',
    ],
    steps.map((s) => [
      s.n,
      `${s.completed}/${s.interviews}`,
      pct(s.liveCpuPerInterview),
      pct(s.idleCpuPerSlot),
      mib(s.livePodBytes / s.n),
      mib(sum(s.liveBotPss) / s.n),
      mib(sum(s.idleBotPss) / s.n),
      mib(s.workerPss),
      ms(percentile(s.latencies, 50)),
      ms(percentile(s.latencies, 95)),
      s === base ? '' : `${pairedShift(s, base) >= 0 ? '+' : ''}${ms(pairedShift(s, base))}`,
      `${fmt(s.gapsMs.length / s.interviews, 1)} (${ms(percentile(s.gapsMs, 50))}, ${ms(percentile(s.gapsMs, 100))})`,
      pct(s.throttled),
      pct(s.machineBusy),
      s === base
        ? 'baseline'
        : passes(s, base)
          ? 'holds'
          : s.machineBusy >= MACHINE_SATURATED
            ? 'the machine ran out'
            : `past capacity${s.memoryLimitHits > 0 ? ' (memory limit hit)' : ''}`,
    ]),
  );
  const held = steps.filter((s) => s === base || passes(s, base));
  const capacity = held[held.length - 1]!;
  capacities.push({
    capacity,
    reachedEnd: held.length === steps.length,
    failedBelow: steps.filter((s) => s.n < capacity.n && !held.includes(s)).map((s) => s.n),
  });
}
console.log('');
for (const { capacity, reachedEnd, failedBelow } of capacities) {
  const cpuPer = capacity.liveCpuPerInterview;
  const memPer = sum(capacity.liveBotPss) / capacity.n;
  const byCapacity = Math.floor((capacity.n / POD.cpus) * SAMPLE_POD.cpus);
  const byCpu = Math.floor(SAMPLE_POD.cpus / cpuPer);
  const byMemory = Math.floor((SAMPLE_POD.memoryBytes - capacity.workerPss) / memPer);
  console.log(
    `capacity, ${designName(capacity)}: ${capacity.n} live interviews in ${POD.cpus} CPU / ` +
      `${mib(POD.memoryBytes)}` +
      (reachedEnd ? " (the last step tried still held: the ramp stopped at BENCH_CAPACITY_STEPS, not at the pod's limit)" : '') +
      (failedBelow.length > 0
        ? `; but N=${failedBelow.join(', ')} did not hold in this run: at that size the verdict is not yet settled`
        : ''),
  );
  console.log(
    `  scaled to the spec's sample pod (${SAMPLE_POD.cpus} CPU, ${mib(SAMPLE_POD.memoryBytes)}): ${byCapacity} by ` +
      `the measured capacity per CPU; the CPU accounting alone would allow ${byCpu} at 100% of the quota (bursts, ` +
      `not the average, use the quota up first), memory ${byMemory} (bots ${mib(memPer)} per interview, worker ` +
      `${mib(capacity.workerPss)}); an extrapolation, not a measurement`,
  );
}
console.log(
  "CPU: the cgroup's own accounting (worker and bots) over the window where all N were live, per interview, as a " +
    "share of one core. Memory: the cgroup's charge (page cache included) a few seconds into that window, and each " +
    "process's PSS (shared pages split between their users).",
);
console.log(describeScores(scored));
console.log(
  "Turn: end of a plain answer (its last frame sent) to the first audible frame of the bot's next utterance, as " +
    'the respondent hears it (barge-ins left out); Δ same turns: the median, over the turns both steps ran (the same ' +
    "answer to the same question), of the step's latency minus N=1's. Gaps: silences under 500 ms between audible " +
    "frames of the bot's voice while the respondent is silent (late or missing frames, as heard).",
);
console.log(
  `Capacity: the largest N with every interview completed, turn p95 within ` +
    `${Math.round((LATENCY_SLACK - 1) * 100)}% of N=1 and no more gaps per interview than at N=1.`,
);
const lastDesign = designs[designs.length - 1]!;
const largest = lastDesign[lastDesign.length - 1]!;
const threadRows = [...largest.threads].filter(([, share]) => share >= 0.001).sort((a, b) => b[1] - a[1]);
const botTotal = threadRows.reduce((a, [, share]) => a + share, 0);
console.log(
  `\nwhere a live interview's CPU goes at N=${largest.n}, ${designName(largest)} (per-thread kernel accounting of ` +
    `the bot processes, grouped by thread name; share of one core per interview):`,
);
printTable(
  ['thread', 'CPU / live interview', 'of the bot'],
  [
    ...threadRows.map(([name, share]) => [name, pct(share), pct(share / botTotal)]),
    ['(all bot threads)', pct(botTotal), '100.0%'],
    ['worker process (spawns, heartbeats, Redis)', pct(largest.workerCpuPerInterview), ''],
  ],
);
if (PROFILE_DIR) {
  console.log(`\nJavaScript CPU profiles of the bots (${PROFILE_DIR}), self time by function, all steps:`);
  printTable(
    ['function (script)', 'self time', 'of the profiled time'],
    summariseProfiles(PROFILE_DIR, 15).map((r) => [r.name, `${fmt(r.ms, 0)} ms`, pct(r.share)]),
  );
}
console.log('latency profile "realistic":');
for (const line of REALISTIC_SOURCES) console.log(`- ${line}`);
for (const s of designs.flat()) if (s.failures.length > 0) console.log(`${designName(s)}, N=${s.n} failures: ${s.failures.join('; ')}`);
process.exit(0);
