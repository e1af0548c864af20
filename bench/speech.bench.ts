import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silencePcm, wavFromPcm16 } from '../lib/pcm.ts';
import { OpenAIRealtimeSpeechToText } from '../worker/providers/realtime-stt.ts';
import { readWavPcm, speak, speakWithPiper, SPEECH_RATE } from '../test/harness/speech.ts';
import { startSpeechServer } from '../test/harness/speech-server.ts';
import { words } from '../test/harness/word-recall.ts';
import { fmt, machineLine, percentile, printTable } from './support.ts';
import { SPOKEN_ANSWERS } from '../test/harness/spoken-answers.ts';

/**
 * The speech server (docs/speech.md) with the real models, on this machine:
 * 1. word error rate on a fixed answer set spoken by the Piper voice, by espeak-ng, and by Piper with
 *    noise at about 15 dB SNR (batch endpoint, one request at a time);
 * 2. time from the end of an answer to its final transcript, p50/p95, with 1, 2, 4 (...) respondents
 *    at once, each talking like a respondent: 20 ms frames at real-time pace through the worker's
 *    realtime client, a commit at the end of each answer, a pause, the next answer;
 * 3. the server's resident memory after each level.
 * Knobs: BENCH_SPEECH_CONCURRENCY (default "1,2,4"), BENCH_SPEECH_ANSWERS (answers per respondent,
 * default 6), BENCH_SPEECH_PAUSE_MS (default 1500). Smallest run: BENCH_SPEECH_CONCURRENCY=1
 * BENCH_SPEECH_ANSWERS=2. Not part of npm test; never run it while tests run (it measures the CPU).
 */
const LEVELS = (process.env.BENCH_SPEECH_CONCURRENCY ?? '1,2,4').split(',').map(Number);
const PER_RESPONDENT = Number(process.env.BENCH_SPEECH_ANSWERS ?? 6);
const PAUSE_MS = Number(process.env.BENCH_SPEECH_PAUSE_MS ?? 1500);
const ANSWERS: readonly string[] = SPOKEN_ANSWERS;

/** Word error rate: word-level edit distance over the reference's word count, pooled. */
function wordErrors(reference: string, hypothesis: string): { errors: number; words: number } {
  const r = words(reference);
  const h = words(hypothesis);
  let prev = Array.from({ length: h.length + 1 }, (_, j) => j);
  for (let i = 1; i <= r.length; i++) {
    const row = [i];
    for (let j = 1; j <= h.length; j++) row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (r[i - 1] === h[j - 1] ? 0 : 1)));
    prev = row;
  }
  return { errors: prev[h.length]!, words: r.length };
}

/** Deterministic white noise at `snrDb` below the signal's power (a fixed-seed LCG, no Math.random). */
function withNoise(pcm: Buffer, snrDb: number): Buffer {
  let power = 0;
  for (let i = 0; i < pcm.length; i += 2) power += pcm.readInt16LE(i) ** 2;
  power /= pcm.length / 2;
  const amplitude = Math.sqrt((power / 10 ** (snrDb / 10)) * 3); // uniform noise in [-a, a] has power a^2/3
  let seed = 12345;
  const out = Buffer.alloc(pcm.length);
  for (let i = 0; i < pcm.length; i += 2) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    const n = ((seed / 0x7fffffff) * 2 - 1) * amplitude;
    out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(pcm.readInt16LE(i) + n))), i);
  }
  return out;
}

console.log(machineLine());
const dir = mkdtempSync(join(tmpdir(), 'speech-bench-'));
const serverStarted = startSpeechServer({ SPEECH_QUEUE_CAPACITY: '256', SPEECH_MAX_SESSIONS: '256' }, join(dir, 'logs'));
const piperJobs = ANSWERS.map((text, i) => ({ text, file: join(dir, `piper-${i}.wav`) }));
speakWithPiper(piperJobs);
const voices: Record<string, Buffer[]> = {
  piper: piperJobs.map((j) => readWavPcm(j.file).pcm),
  'espeak-ng': ANSWERS.map((text, i) => {
    speak(text, join(dir, `espeak-${i}.wav`));
    return readWavPcm(join(dir, `espeak-${i}.wav`)).pcm;
  }),
};
voices['piper + noise 15 dB'] = voices.piper!.map((pcm) => withNoise(pcm, 15));
const server = await serverStarted;

try {
  const werRows: Array<Array<string | number>> = [];
  for (const [voice, clips] of Object.entries(voices)) {
    let errors = 0;
    let total = 0;
    const decodeMs: number[] = [];
    for (const [i, pcm] of clips.entries()) {
      const form = new FormData();
      form.set('model', 'moonshine');
      form.set('file', new Blob([new Uint8Array(wavFromPcm16(pcm, SPEECH_RATE))], { type: 'audio/wav' }), 'a.wav');
      const t0 = performance.now();
      const res = await fetch(`${server.url}/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${server.token}` }, body: form });
      const { text } = (await res.json()) as { text: string };
      decodeMs.push(performance.now() - t0);
      const e = wordErrors(ANSWERS[i]!, text);
      errors += e.errors;
      total += e.words;
    }
    werRows.push([voice, clips.length, `${fmt((errors / total) * 100, 1)}%`, `${fmt(percentile(decodeMs, 50))} ms`]);
  }
  console.log('\nWord error rate (batch, one request at a time)\n');
  printTable(['voice', 'answers', 'WER', 'request p50'], werRows);

  const latencyRows: Array<Array<string | number>> = [];
  for (const level of LEVELS) {
    const latencies: number[] = [];
    const respondent = async (r: number) => {
      const stt = new OpenAIRealtimeSpeechToText({ baseURL: server.url, apiKey: server.token, model: 'moonshine', provider: 'bench', policy: { timeoutMs: 120_000, retries: 0 }, openTimeoutMs: 30_000 });
      const stream = await stt.openStream({ sampleRate: SPEECH_RATE });
      const pending: Array<Promise<void>> = [];
      try {
        for (let a = 0; a < PER_RESPONDENT; a++) {
          const pcm = Buffer.concat([voices.piper![(r + a) % ANSWERS.length]!, silencePcm(PAUSE_MS, SPEECH_RATE)]);
          const speechBytes = voices.piper![(r + a) % ANSWERS.length]!.length;
          const started = performance.now();
          for (let off = 0, n = 0; off < pcm.length; off += 640, n++) {
            const due = started + n * 20;
            if (due > performance.now()) await new Promise((res) => setTimeout(res, due - performance.now()));
            stream.append(pcm.subarray(off, off + 640));
            // The answer's last frame is out: commit (as the bot does at the pause) and time the transcript.
            if (off + 640 >= speechBytes && off < speechBytes) {
              const endOfSpeech = performance.now();
              pending.push(stream.commit().then(() => void latencies.push(performance.now() - endOfSpeech)));
            }
          }
        }
        await Promise.all(pending);
      } finally {
        stream.close();
      }
    };
    await Promise.all(Array.from({ length: level }, (_, r) => respondent(r)));
    const rss = await server.metric('process_resident_memory_bytes');
    latencyRows.push([level, latencies.length, `${fmt(percentile(latencies, 50))} ms`, `${fmt(percentile(latencies, 95))} ms`, `${fmt(rss / 2 ** 20)} MiB`]);
  }
  console.log(`\nEnd of speech to final transcript (realtime, 20 ms frames at real-time pace, ${PAUSE_MS} ms pauses, ${PER_RESPONDENT} answers each; one server process, SPEECH_STT_CONCURRENCY=1)\n`);
  printTable(['respondents at once', 'answers', 'p50', 'p95', 'server RSS after'], latencyRows);
} finally {
  await server.stop();
}
