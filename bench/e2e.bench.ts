import OpenAI, { toFile } from 'openai';
import { answerClips, runNodeInterview } from '../test/harness/node-interview.ts';
import { SPEECH_RATE } from '../test/harness/speech.ts';
import { wavFromPcm16 } from '../lib/pcm.ts';
import { INTERVIEW, startSystem } from '../test/harness/system.ts';
import { pageFirstAudio } from './page-first-audio.ts';
import { machineLine, median, ms, percentile, printTable, timeIt } from './support.ts';

/**
 * The start of the loop on this machine, with the local model stand-ins: time from the connect call
 * to the bot's first audio at the respondent (a Node client speaking the local-room protocol, as the
 * page does, and the page in Chromium). Beside it, the stand-in voice's own first byte, measured by
 * calling it directly the way the worker does (same client, same request), so that what is left is
 * the system's own share: spawn, rooms, relays, process hops, buffering. Latency per turn (end of
 * speech to the bot's next audio, with today's turn-taking: VAD, turn model, realtime transcription,
 * the model's decision) is measured by bench/turns.bench.ts, which replaced this bench's turn row
 * (it assumed the old fixed VAD wait).
 */
const INTERVIEWS = Number(process.env.BENCH_INTERVIEWS ?? 3);
const DIRECT_SAMPLES = 5;

const p90 = (xs: number[]): number => percentile(xs, 90);

/** The stand-in's own latency, called as the worker calls it: TTS to first byte, STT, LLM stream. */
async function directProviderLatency(baseURL: string, answer: Buffer): Promise<{ ttsFirstByte: number; stt: number; llm: number }> {
  const client = new OpenAI({ baseURL, apiKey: 'sk-local-standin-000000', maxRetries: 0 });
  const tts: number[] = [];
  const stt: number[] = [];
  const llm: number[] = [];
  for (let i = 0; i < DIRECT_SAMPLES; i++) {
    const text = INTERVIEW.questions[i % INTERVIEW.questions.length]!.text;
    tts.push(
      await timeIt(async () => {
        const res = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: text, response_format: 'pcm' });
        const reader = res.body!.getReader();
        await reader.read();
        await reader.cancel();
      }),
    );
    stt.push(
      await timeIt(
        async () =>
          void (await client.audio.transcriptions.create({
            model: 'whisper-1',
            file: await toFile(wavFromPcm16(answer, SPEECH_RATE), 'answer.wav'),
          })),
      ),
    );
    llm.push(
      await timeIt(async () => {
        const stream = await client.chat.completions.create({
          model: 'gpt-4o-mini',
          stream: true,
          max_tokens: 120,
          messages: [
            { role: 'system', content: 'Decide.' },
            { role: 'user', content: 'answer' },
          ],
        });
        for await (const chunk of stream) void chunk;
      }),
    );
  }
  return { ttsFirstByte: median(tts), stt: median(stt), llm: median(llm) };
}

async function main(): Promise<void> {
  console.log(machineLine());
  const system = await startSystem({ providers: 'fake' });
  try {
    if (system.providers.kind !== 'fake') throw new Error('the benchmark runs on the local stand-ins');
    const clips = answerClips(['A friend told me about you.', 'Make the setup faster.']);
    const firstAudio: number[] = [];
    const connect: number[] = [];
    for (let i = 0; i < INTERVIEWS; i++) {
      const run = await runNodeInterview(system, { answers: clips, metadata: { bench: i } });
      connect.push(run.connectMs);
      const first = run.room.botUtterances[0];
      firstAudio.push(first ? first.firstAudio - run.connectStarted : NaN);
    }
    const atPage = await pageFirstAudio(system, 3);
    const direct = await directProviderLatency(system.providers.fake.url, clips[0]!);
    const spans = (name: string): number[] =>
      system.otlp.spans.filter((s) => s.name === name).map((s) => Number(s.endNs - s.startNs) / 1e6);
    await system.otlp.waitFor((s) => s.some((x) => x.name === 'tts.first_byte'), 10_000, 'spans');

    const firstProviders = direct.ttsFirstByte;
    const rows: Array<[string, string, string, string, string]> = [
      ['connect call (spawn, route, room)', ms(median(connect)), ms(p90(connect)), '-', ms(median(connect))],
      [
        'connect -> first bot audio (Node client)',
        ms(median(firstAudio)),
        ms(p90(firstAudio)),
        `tts first byte ${ms(firstProviders)}`,
        ms(median(firstAudio) - firstProviders),
      ],
      [
        'connect -> first bot audio (page, Chromium)',
        ms(median(atPage)),
        ms(p90(atPage)),
        `tts first byte ${ms(firstProviders)}`,
        ms(median(atPage) - firstProviders),
      ],
    ];
    console.log(
      `\nthe start of the loop, ${INTERVIEWS} interviews from a Node respondent and 3 starts at the page, local ` +
        `stand-in providers (no added latency), wss local rooms`,
    );
    printTable(['measure', 'median', 'p90', 'stand-in providers alone (median, direct calls)', "system's own share (median)"], rows, [
      'left',
      'right',
      'right',
      'left',
      'left',
    ]);
    console.log(
      `\ninside the worker (spans, median): llm.turn ${ms(median(spans('llm.turn')))}, tts.first_byte ` +
        `${ms(median(spans('tts.first_byte')))}, session.start ${ms(median(spans('session.start')))}`,
    );
    console.log(
      `stand-in language model and transcription alone (direct calls, median): llm ${ms(direct.llm)}, stt ` +
        `${ms(direct.stt)}; latency per turn: bench/turns.bench.ts`,
    );
  } finally {
    await system.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
