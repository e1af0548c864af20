import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silencePcm } from '../../lib/pcm.ts';
import { OpenAIRealtimeSpeechToText } from '../../worker/providers/realtime-stt.ts';
import { waitFor } from '../harness/ports.ts';
import { readWavPcm, speakWithPiper, SPEECH_RATE } from '../harness/speech.ts';
import { startSpeechServer, type SpeechServerHandle } from '../harness/speech-server.ts';
import { SPOKEN_ANSWERS } from '../harness/spoken-answers.ts';
import { contentRecall } from '../harness/word-recall.ts';

/**
 * Incremental realtime decoding (speech/realtime-buffer.ts) with the real recogniser: a Piper
 * answer of three sentences with thinking pauses between them goes through the worker's realtime
 * client, uncommitted; the server decodes the sentences it has cut at the pauses before any commit
 * arrives (its `speech_realtime_pieces_total{stage="before_commit"}`), and the commit's transcript,
 * joined from the pieces, still holds the answer's content words. No timing is asserted: the wait
 * for the decodes ahead is a deadline, wide for a loaded machine.
 */
const PARTS = [SPOKEN_ANSWERS[0], SPOKEN_ANSWERS[3], SPOKEN_ANSWERS[5]];
/** Said alone and followed by a little quiet: decoded early, before its commit (SPEECH_EARLY_TAIL_MS). */
const SHORT_ANSWER = SPOKEN_ANSWERS[1]!;
/** Past the early tail's 120 ms of quiet, short of the 200 ms that closes a piece; two of the client's batches. */
const QUIET_BEFORE_COMMIT_MS = 160;
/** The realtime client's append batch (80 ms at 16 kHz, PCM16). */
const BATCH_BYTES = ((SPEECH_RATE * 80) / 1000) * 2;
const PAUSE_MS = 700;
const SLOW = { timeoutMs: 300_000, retries: 0 };

let server: SpeechServerHandle;
let answer: Buffer;
let shortAnswer: Buffer;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'speech-incremental-'));
  const started = startSpeechServer({}, join(dir, 'logs'));
  const jobs = PARTS.map((text, i) => ({ text, file: join(dir, `part-${i}.wav`) }));
  const shortJob = { text: SHORT_ANSWER, file: join(dir, 'short.wav') };
  speakWithPiper([...jobs, shortJob]);
  // The client sends 80 ms batches: a little silence first makes the whole a number of batches, so
  // that all of the quiet reaches the server before the commit.
  const spoken = readWavPcm(shortJob.file).pcm;
  const lead = Buffer.alloc((BATCH_BYTES - (spoken.length % BATCH_BYTES)) % BATCH_BYTES);
  shortAnswer = Buffer.concat([lead, spoken, silencePcm(QUIET_BEFORE_COMMIT_MS, SPEECH_RATE)]);
  const pause = silencePcm(PAUSE_MS, SPEECH_RATE);
  answer = Buffer.concat(jobs.flatMap((job, i) => (i === 0 ? [readWavPcm(job.file).pcm] : [pause, readWavPcm(job.file).pcm])));
  server = await started;
}, 300_000);

afterAll(async () => {
  await server?.stop();
});

describe('incremental realtime decoding', () => {
  it('decodes the sentences before the commit, cut at the pauses, and the joined transcript holds the content words', async () => {
    const expected = PARTS.join(' ');
    const stt = new OpenAIRealtimeSpeechToText({
      baseURL: server.url,
      apiKey: server.token,
      model: 'gpt-4o-transcribe',
      provider: 'speech',
      policy: SLOW,
      openTimeoutMs: 30_000,
    });
    const stream = await stt.openStream({ sampleRate: SPEECH_RATE, language: 'en' });
    try {
      const ahead = () => server.metric('speech_realtime_pieces_total', { stage: 'before_commit' });
      expect(await ahead()).toBe(0);
      for (let i = 0; i < answer.length; i += 640) stream.append(answer.subarray(i, i + 640));
      // The last sentence is still open (no pause after it): the two before it are decoded with no commit sent.
      await waitFor(async () => (await ahead()) >= 2, {
        timeoutMs: 240_000,
        intervalMs: 250,
        what: 'two pieces decoded ahead of the commit',
      });
      const heard = await stream.commit();
      expect(contentRecall(expected, heard), heard).toBeGreaterThanOrEqual(0.8);
      expect(await ahead()).toBe(2);
      // The tail (the last sentence) after the commit, and nothing else.
      expect(await server.metric('speech_realtime_pieces_total', { stage: 'after_commit' })).toBe(1);
    } finally {
      stream.close();
    }
  }, 600_000);

  it('decodes an answer early, at its first quiet, so its commit finds the transcript decoded or under way', async () => {
    const stt = new OpenAIRealtimeSpeechToText({
      baseURL: server.url,
      apiKey: server.token,
      model: 'gpt-4o-transcribe',
      provider: 'speech',
      policy: SLOW,
      openTimeoutMs: 30_000,
      batchMs: 80,
    });
    const stream = await stt.openStream({ sampleRate: SPEECH_RATE, language: 'en' });
    const pieces = (stage: string) => server.metric('speech_realtime_pieces_total', { stage });
    const usedEarly = () => server.metric('speech_realtime_early_tails_total', { outcome: 'used' });
    try {
      const [before, after, used] = [await pieces('before_commit'), await pieces('after_commit'), await usedEarly()];
      for (let i = 0; i < shortAnswer.length; i += 640) stream.append(shortAnswer.subarray(i, i + 640));
      // No pause of 200 ms, so no piece was cut: only the early tail can be decoded before the commit.
      await waitFor(async () => (await pieces('before_commit')) > before, {
        timeoutMs: 240_000,
        intervalMs: 100,
        what: 'the early tail decoded before the commit',
      });
      const heard = await stream.commit();
      expect(contentRecall(SHORT_ANSWER, heard), heard).toBeGreaterThanOrEqual(0.8);
      expect(await usedEarly()).toBe(used + 1);
      // The commit decoded nothing more: its transcript was the early tail's.
      expect(await pieces('after_commit')).toBe(after);
      expect(await pieces('before_commit')).toBe(before + 1);
    } finally {
      stream.close();
    }
  }, 600_000);
});
