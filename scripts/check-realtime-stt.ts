/**
 * Checks the worker's speech-to-text settings against the real provider, both ways the bot uses
 * them: a realtime stream (STT_MODE=realtime) and the batch upload it falls back to.
 *
 *   npx tsx scripts/check-realtime-stt.ts [answer.wav]
 *
 * Reads the worker's own variables (STT_BASE_URL, STT_API_KEY or OPENAI_API_KEY, STT_MODEL,
 * STT_REALTIME_MODEL, PROVIDER_TIMEOUT_MS; NODE_EXTRA_CA_CERTS for a private CA). Run in a worker
 * pod it needs nothing else; elsewhere the settings that do not matter here get placeholders.
 * The WAV (16-bit PCM, any rate; without one, 1.5 s of tone) is streamed in 20 ms frames at real
 * time, as a respondent speaks. Prints one JSON line per path and exits 1 if either failed.
 */
import { readFileSync } from 'node:fs';
import { parseWav, resamplePcm16 } from '../lib/pcm.ts';
import { loadConfig } from '../worker/config.ts';
import { createProviders } from '../worker/providers/index.ts';
import { createLogger } from '../lib/log.ts';

const RATE = 16_000;
const FRAME_BYTES = (RATE / 50) * 2;

function audio(file: string | undefined): Buffer {
  if (!file) {
    const pcm = Buffer.alloc(RATE * 1.5 * 2);
    for (let i = 0; i < pcm.length / 2; i++) pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / RATE)), i * 2);
    return pcm;
  }
  const { pcm, sampleRate, channels } = parseWav(readFileSync(file));
  if (channels !== 1) throw new Error(`${file}: mono WAV expected, got ${channels} channels`);
  return resamplePcm16(pcm, sampleRate, RATE);
}

const env = {
  WORKER_TOKEN: 'placeholder-token-for-a-check',
  BACKEND_URL: 'http://127.0.0.1:9',
  ROOM_PROVIDER: 'local',
  ...process.env,
  STT_MODE: 'realtime',
};
const config = loadConfig(env);
const providers = createProviders(config, { logger: createLogger({ name: 'check-realtime-stt' }) });
const pcm = audio(process.argv[2]);
const seconds = pcm.length / 2 / RATE;
let failed = false;

try {
  const stream = await providers.sttStream!.openStream({ sampleRate: RATE });
  for (let i = 0; i < pcm.length; i += FRAME_BYTES) {
    stream.append(pcm.subarray(i, i + FRAME_BYTES));
    await new Promise((r) => setTimeout(r, 20));
  }
  const t0 = performance.now();
  const text = await stream.commit();
  const finalMs = Math.round(performance.now() - t0);
  stream.close();
  console.log(
    JSON.stringify({
      path: 'realtime',
      model: config.turns.engines.sttRealtimeModel,
      audioSeconds: seconds,
      commitToFinalMs: finalMs,
      text,
    }),
  );
} catch (err) {
  failed = true;
  console.log(
    JSON.stringify({
      path: 'realtime',
      model: config.turns.engines.sttRealtimeModel,
      error: (err as Error).message,
      reason: (err as { reason?: string }).reason,
    }),
  );
}

try {
  const t0 = performance.now();
  const text = await providers.stt.transcribe(pcm, { sampleRate: RATE });
  console.log(
    JSON.stringify({
      path: 'batch',
      model: config.stt.model,
      audioSeconds: seconds,
      uploadToTextMs: Math.round(performance.now() - t0),
      text,
    }),
  );
} catch (err) {
  failed = true;
  console.log(
    JSON.stringify({ path: 'batch', model: config.stt.model, error: (err as Error).message, reason: (err as { reason?: string }).reason }),
  );
}
process.exit(failed ? 1 : 0);
