import { execFileSync } from 'node:child_process';
import {
  AudioFrame,
  AudioSource,
  AudioStream,
  LocalAudioTrack,
  Room,
  RoomEvent,
  TrackKind,
  TrackPublishOptions,
  TrackSource,
} from '@livekit/rtc-node';
import { levelDbfs } from '../worker/bot/audio.ts';
import { LiveKitRoomProvider } from '../worker/rooms/livekit/provider.ts';
import { startLiveKitServer, type LiveKitServer } from '../test/harness/livekit-server.ts';
import { answerClips, runNodeInterview, turnLatencies } from '../test/harness/node-interview.ts';
import { startSystem } from '../test/harness/system.ts';
import { pageFirstAudio } from './page-first-audio.ts';
import { machineLine, median, ms, percentile, printTable, rssMiB } from './support.ts';

/**
 * Local rooms and LiveKit rooms side by side, one run, local stand-in providers: connect -> first
 * bot audio at a Node respondent and at the respondent page in Chromium, end of speech -> next bot audio, memory of a live bot process
 * (the worker side), and for LiveKit the one-way audio latency of its media path both ways (two
 * rtc-node participants in one process, one clock: a tone burst sent, its first loud frame heard).
 * Local rooms carry PCM over the worker's WebSocket: no jitter buffer, one TCP hop, so their
 * one-way time is the relay's (well under the turn numbers' resolution) and is not measured apart.
 */
const INTERVIEWS = Number(process.env.BENCH_INTERVIEWS ?? 2);
const VAD_SILENCE_MS = 600;
const p90 = (xs: number[]): number => percentile(xs, 90);
const mib = (x: number): string => (Number.isNaN(x) ? 'n/a' : `${x.toFixed(0)} MiB`);

function childPids(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map(Number)
      .filter((n) => n > 0);
  } catch {
    return [];
  }
}

async function untilCapacity<T>(run: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await run();
    } catch (err) {
      if (!String((err as Error).message).includes('no_capacity') || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

interface RoomsResult {
  firstAudio: number[];
  pageFirstAudio: number[];
  turns: number[];
  liveBotMiB: number[];
  idleBotMiB: number[];
}

async function measureRooms(rooms: 'local' | 'livekit'): Promise<RoomsResult> {
  const system = await startSystem({ providers: 'fake', vadSilenceMs: VAD_SILENCE_MS, rooms });
  const out: RoomsResult = { firstAudio: [], pageFirstAudio: [], turns: [], liveBotMiB: [], idleBotMiB: [] };
  try {
    const clips = answerClips(['A friend told me about you.', 'Make the setup faster.']);
    const workerPid = system.hosted.process.proc.pid!;
    out.idleBotMiB.push(...childPids(workerPid).map(rssMiB));
    for (let i = 0; i < INTERVIEWS; i++) {
      let sampled = false;
      // The one warm slot comes back a moment after the previous interview: retry until then.
      const run = await untilCapacity(() =>
        runNodeInterview(system, {
          answers: clips,
          metadata: { bench: rooms },
          onStep: (step) => {
            // Mid-interview, the busiest bot process is the live one.
            if (sampled || step.kind !== 'state' || step.text !== 'listening') return;
            sampled = true;
            out.liveBotMiB.push(Math.max(...childPids(workerPid).map(rssMiB)));
          },
        }),
      );
      const first = run.room.botUtterances[0];
      out.firstAudio.push(first ? first.firstAudio - run.connectStarted : NaN);
      out.turns.push(...turnLatencies(run.room));
    }
    out.pageFirstAudio = await untilCapacity(() => pageFirstAudio(system, 2));
  } finally {
    await system.stop();
  }
  return out;
}

/** One-way audio time through a LiveKit server between two rtc-node participants, `bursts` times each way. */
async function liveKitOneWay(server: LiveKitServer, bursts: number): Promise<{ aToB: number[]; bToA: number[] }> {
  const provider = new LiveKitRoomProvider({ url: server.url, apiKey: server.apiKey, apiSecret: server.apiSecret });
  const room = await provider.createRoom({ ttlSeconds: 600 });
  const now = Math.floor(Date.now() / 1000);
  const join = async (role: 'bot' | 'respondent') => {
    const r = new Room();
    // A 20 ms queue: a microphone hands over each frame as it is captured, and the bot starts a reply
    // into an empty queue; a deeper queue, kept full by the steady stream below, would be measured as
    // if it were the media path.
    const source = new AudioSource(24_000, 1, 20);
    const heard: number[] = [];
    r.on(RoomEvent.TrackSubscribed, (track) => {
      if (track.kind !== TrackKind.KIND_AUDIO) return;
      void (async () => {
        let loud = false;
        for await (const frame of new AudioStream(track, { sampleRate: 24_000, numChannels: 1 })) {
          const level = levelDbfs(Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength));
          if (level > -30 && !loud) heard.push(performance.now());
          loud = level > -30;
        }
      })().catch(() => undefined);
    });
    await r.connect(server.url, provider.mintToken({ room, role, sessionId: 'inv_bench', issuedAt: now, expiresAt: now + 600 }), {
      autoSubscribe: true,
      dynacast: false,
    });
    await r.localParticipant!.publishTrack(
      LocalAudioTrack.createAudioTrack(role, source),
      new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }),
    );
    return { r, source, heard };
  };
  const a = await join('bot');
  const b = await join('respondent');
  const frame = (loud: boolean): AudioFrame => {
    const f = AudioFrame.create(24_000, 1, 480);
    if (loud) for (let i = 0; i < f.data.length; i++) f.data[i] = Math.round(12_000 * Math.sin((2 * Math.PI * 440 * i) / 24_000));
    return f;
  };
  // Both sides stream in real time; every 600 ms one side sends a 100 ms burst.
  const sent: Array<{ from: 'a' | 'b'; at: number }> = [];
  let stop = false;
  const stream = async (who: 'a' | 'b', source: AudioSource): Promise<void> => {
    for (let n = 0; !stop; n++) {
      const slot = n % 60; // 60 frames of 20 ms = 1.2 s; a sends at frame 10, b at frame 40
      const loud = (who === 'a' ? slot >= 10 && slot < 15 : slot >= 40 && slot < 45) && n > 60;
      if (loud && (who === 'a' ? slot === 10 : slot === 40)) sent.push({ from: who, at: performance.now() });
      await source.captureFrame(frame(loud));
    }
  };
  const streams = [stream('a', a.source), stream('b', b.source)];
  await new Promise((r) => setTimeout(r, 1200 * (bursts + 1) + 1000));
  stop = true;
  await Promise.all(streams);
  const pair = (from: 'a' | 'b', heard: number[]): number[] =>
    sent
      .filter((s) => s.from === from)
      .map((s) => heard.find((h) => h >= s.at && h - s.at < 600))
      .map((h, i) => (h === undefined ? NaN : h - sent.filter((s) => s.from === from)[i]!.at))
      .filter((x) => !Number.isNaN(x));
  const result = { aToB: pair('a', b.heard), bToA: pair('b', a.heard) };
  await Promise.all([a.r.disconnect(), b.r.disconnect()]);
  await provider.deleteRoom(room.name);
  return result;
}

async function main(): Promise<void> {
  console.log(machineLine());
  const local = await measureRooms('local');
  const livekit = await measureRooms('livekit');
  const server = await startLiveKitServer();
  let oneWay: { aToB: number[]; bToA: number[] };
  try {
    oneWay = await liveKitOneWay(server, 6);
  } finally {
    await server.stop();
  }
  const row = (name: string, l: number[], k: number[], fmt: (x: number) => string = ms): string[] => [
    name,
    fmt(median(l)),
    fmt(p90(l)),
    fmt(median(k)),
    fmt(p90(k)),
    ms(median(k) - median(l)),
  ];
  console.log(
    `\nrooms side by side: ${INTERVIEWS} interviews each from a Node respondent (local: WebSocket; LiveKit: ` +
      `rtc-node over WebRTC), stand-in providers, VAD silence ${VAD_SILENCE_MS} ms`,
  );
  printTable(
    ['measure', 'local median', 'local p90', 'LiveKit median', 'LiveKit p90', 'LiveKit adds (median)'],
    [
      row('connect -> first bot audio (Node respondent)', local.firstAudio, livekit.firstAudio),
      row('connect -> first bot audio (page, Chromium)', local.pageFirstAudio, livekit.pageFirstAudio),
      row('end of speech -> next bot audio', local.turns, livekit.turns),
      [
        ...row('live bot process RSS (worker side)', local.liveBotMiB, livekit.liveBotMiB, mib).slice(0, 5),
        mib(median(livekit.liveBotMiB) - median(local.liveBotMiB)),
      ],
      [
        ...row('idle bot / worker children RSS', local.idleBotMiB, livekit.idleBotMiB, mib).slice(0, 5),
        mib(median(livekit.idleBotMiB) - median(local.idleBotMiB)),
      ],
    ],
    ['left', 'right', 'right', 'right', 'right', 'right'],
  );
  console.log(
    `\nLiveKit one-way audio (rtc-node to rtc-node through livekit-server, 100 ms tone bursts): bot -> respondent ` +
      `median ${ms(median(oneWay.aToB))} (p90 ${ms(p90(oneWay.aToB))}, n=${oneWay.aToB.length}), respondent -> bot ` +
      `median ${ms(median(oneWay.bToA))} (p90 ${ms(p90(oneWay.bToA))}, n=${oneWay.bToA.length})`,
  );
  console.log('aim: LiveKit adds under 100 ms one way and under 150 MiB per live bot.');
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
