import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConversationRecorder } from '../test/harness/conversation-recording.ts';
import { answerClips, runNodeInterview, turnLatencies, type InterviewStep } from '../test/harness/node-interview.ts';
import { startSpeechServer } from '../test/harness/speech-server.ts';
import { startSystem, type System } from '../test/harness/system.ts';
import { describeWait, turnWaits } from './turn-waits.ts';

/**
 * `npm run demo`: the whole system on this machine, one interview, a readable timeline, then stop.
 * Starts a Redis, the api-stub (SQLite + seed), a worker as the hosted pipeline and a second one as
 * a customer's self-hosted worker (both HTTPS, throwaway CA), the model providers (real ones when
 * their keys are in the environment, else the local OpenAI-compatible stand-in), an OTLP receiver and a webhook
 * receiver verifying each event with the server SDK, and the self-hosted speech server (speech/): the
 * workers hear the respondent through its recogniser and speak with its Piper voice. A respondent in
 * Node speaks answers with the Piper voice; the timeline shows what the recogniser heard, and the
 * whole conversation is written as a stereo WAV beside the transcript (left the respondent, right the bot).
 * DEMO_ROUTE=self_hosted sets the workspace's self-host endpoint first, to run on the other worker.
 * Interviews run in LiveKit rooms (a livekit-server started here) when its binary is available,
 * else in the workers' own WebSocket rooms; DEMO_ROOMS=local|livekit chooses.
 */
const root = resolve(import.meta.dirname, '..');
const outDir = join(root, '.demo');
const t0 = performance.now();
/** What the demo's respondent says, one answer per question (the last is said again to a follow-up). */
const ANSWERS = [
  'A colleague told me about you at a conference in Berlin.',
  'Make the setup faster, and let me export the reports to spreadsheets.',
  'Nothing else, thanks.',
];
const clock = (at = performance.now()): string => `${((at - t0) / 1000).toFixed(3).padStart(7)} s`;
const line = (text: string, at?: number): void => console.log(`[${clock(at)}] ${text}`);

/** LiveKit rooms when the server binary is there (demo.sh builds it on first run), else local rooms; DEMO_ROOMS=local|livekit decides. */
function demoRooms(): { kind: 'local' | 'livekit'; why: string } {
  const asked = process.env.DEMO_ROOMS;
  if (asked === 'local') return { kind: 'local', why: "rooms: the workers' own WebSocket rooms (DEMO_ROOMS=local)" };
  const binary = execFileSync('bash', [join(root, 'scripts/livekit-server.sh'), '--bin-path'], { encoding: 'utf8' }).trim();
  if (existsSync(binary))
    return {
      kind: 'livekit',
      why:
        `rooms: LiveKit (livekit-server on loopback from ${binary}; the bot and the respondent join over WebRTC; ` +
        `DEMO_ROOMS=local for the workers' own rooms)`,
    };
  if (asked === 'livekit') throw new Error(`DEMO_ROOMS=livekit but ${binary} is missing: run "bash scripts/livekit-server.sh" (needs Go)`);
  return {
    kind: 'local',
    why: 'rooms: the workers\' own WebSocket rooms (livekit-server could not be built here; "bash scripts/livekit-server.sh" says why)',
  };
}

async function main(): Promise<void> {
  const route = process.env.DEMO_ROUTE === 'self_hosted' ? 'self_hosted' : 'hosted';
  console.log(
    `voice interview demo: ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  mkdirSync(outDir, { recursive: true });
  const rooms = demoRooms();
  // The speech server loads its models (a few seconds, longer on a busy machine) while the answers are spoken.
  const speechStarted = startSpeechServer({}, join(outDir, 'logs'));
  const answers = answerClips(ANSWERS, 'piper');
  const speech = await speechStarted;
  let system: System;
  try {
    system = await startSystem({
      logDir: join(outDir, 'logs'),
      transcriptRoot: outDir,
      logLevel: 'info',
      rooms: rooms.kind,
      speech: { url: speech.url, token: speech.token, serves: ['stt', 'tts'] },
    });
  } catch (err) {
    await speech.stop();
    throw err;
  }
  try {
    line(rooms.why);
    line(
      system.providers.kind === 'real'
        ? 'model providers: real ones, from the environment (OPENAI_API_KEY, or LLM_/STT_/TTS_API_KEY with their base URLs)'
        : 'language model: the local OpenAI-compatible stand-in (set OPENAI_API_KEY to use a real one)',
    );
    line(
      `speech: the self-hosted speech server at ${speech.url} (Moonshine hears the respondent, the Piper voice ` +
        `speaks for the bot; STT_BASE_URL and TTS_BASE_URL point at it)`,
    );
    line(
      `system up: api-stub ${system.apiBase}, hosted worker ${system.hosted.url}, self-hosted worker ${system.selfHosted.url} (logs in .demo/logs)`,
    );
    if (route === 'self_hosted') {
      await system.setSelfHost();
      line(`self-host endpoint set for the workspace: ${system.selfHosted.url}/`);
    } else {
      line('no self-host endpoint: sessions go to the hosted pipeline (DEMO_ROUTE=self_hosted for the other worker)');
    }

    const print = (step: InterviewStep): void => {
      const prefix = { status: 'session', connect: 'connect', state: 'bot is', caption: '', ended: '' }[step.kind];
      // The respondent's captions are the recogniser's transcript of what the Piper voice said.
      const text = step.kind === 'caption' ? step.text.replace(/^respondent: /, 'respondent, as recognised: ') : step.text;
      line(prefix ? `${prefix} ${text}` : text, step.at);
    };
    ANSWERS.forEach((text, i) => line(`the respondent will say (Piper voice), answer ${i + 1}: ${text}`));
    const recorder = new ConversationRecorder();
    // Real decoding and synthesis on a busy machine take seconds per turn.
    const run = await runNodeInterview(system, {
      answers,
      metadata: { source: 'npm run demo' },
      onStep: print,
      recorder,
      timeoutMs: 300_000,
    });

    const latencies = turnLatencies(run.room);
    if (run.room.ready !== null && run.room.botUtterances[0]) {
      line(`first bot audio ${(run.room.botUtterances[0].firstAudio - run.connectStarted).toFixed(0)} ms after the connect call began`);
    }
    latencies.forEach((ms, i) =>
      line(
        `turn ${i + 1}: ${Number.isNaN(ms) ? 'no bot audio followed' : `${ms.toFixed(0)} ms`} from the end of the answer to the bot's next audio`,
      ),
    );

    const webhook = await system.webhooks.waitFor('interview.completed', run.sessionId);
    line(
      `webhook ${webhook.event.type} ${webhook.event.id} received and verified with constructEvent (Service-Signature)`,
      webhook.receivedAt - Date.now() + performance.now(),
    );
    const session = await system.retrieve(run.sessionId);
    line(`session ${session.status} at ${session.completedAt}; transcript at ${session.response?.transcriptKey}`);
    if (session.response?.transcriptKey.startsWith('file://')) {
      const wavPath = fileURLToPath(session.response.transcriptKey).replace(/(\.json)?$/, '.conversation.wav');
      writeFileSync(wavPath, recorder.wav());
      const heard = recorder.summary();
      line(
        `conversation recorded: ${wavPath} (${heard.seconds.toFixed(1)} s, stereo 24 kHz: left the respondent, ` +
          `${heard.respondent.soundSeconds.toFixed(1)} s of sound; right the bot, ` +
          `${heard.bot.soundSeconds.toFixed(1)} s of sound)`,
      );
    }
    line(`summary: ${session.response?.summary}`);

    const names = ['session.start', 'room.connect', 'llm.turn', 'tts.first_byte'];
    // Spans arrive in batches: wait for one tts.first_byte per bot line and an llm.turn per answer plus the summary.
    const count = (name: string): number =>
      system.otlp.spans.filter((s) => s.name === name && s.attributes['session.id'] === run.sessionId).length;
    await system.otlp.waitFor(
      () =>
        count('session.start') >= 1 &&
        count('tts.first_byte') >= run.room.botUtterances.length &&
        count('llm.turn') >= run.room.answers.length + 1 &&
        count('stt.final') >= run.room.answers.length,
      15_000,
      'the spans of the interview',
    );
    const mine = system.otlp.spans.filter((s) => s.attributes['session.id'] === run.sessionId);
    for (const name of names) {
      const ms = mine.filter((s) => s.name === name).map((s) => Number(s.endNs - s.startNs) / 1e6);
      line(
        `span ${name} x${ms.length} from ${mine.find((s) => s.name === name)?.resource['service.name']}: ${ms.map((m) => `${m.toFixed(0)} ms`).join(', ')}`,
      );
    }
    // Where each turn's wait went, from the bot's spans (scripts/turn-waits.ts).
    const times = mine.map((s) => ({
      name: s.name,
      startMs: Number(s.startNs) / 1e6,
      endMs: Number(s.endNs) / 1e6,
      attributes: s.attributes,
    }));
    turnWaits(times, latencies).forEach((w, i) => line(`turn ${i + 1} waited: ${w ? describeWait(w) : 'not measured'}`));
    if (run.route !== route) throw new Error(`expected the ${route} route, got ${run.route}`);
    if (session.status !== 'COMPLETED') throw new Error(`the session ended ${session.status}`);
  } finally {
    await system.stop();
    await speech.stop();
    line('stopped everything');
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`demo failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
