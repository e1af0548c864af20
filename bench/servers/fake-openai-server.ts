import { createInterface } from 'node:readline';
import { startFakeOpenAI, type FakeOpenAIOptions } from '../../test/fakes/openai-compatible.ts';

/**
 * The stand-in model provider in its own process, as a remote provider is: its work (and its
 * timers) never share an event loop with the bench's real-time respondent. FAKE_OPENAI_OPTIONS is
 * the JSON of FakeOpenAIOptions. Prints `{"port": N}` once listening. Each stdin line
 * `{"words": "..."}` says what the bench's respondent is saying now: the transcript of the next
 * transcription (batch or realtime commit), as a recogniser would hear it.
 */
const options = JSON.parse(process.env.FAKE_OPENAI_OPTIONS ?? '{}') as FakeOpenAIOptions;
const fake = await startFakeOpenAI(options);
let words: string | undefined;
fake.setRecogniser(() => words);
createInterface({ input: process.stdin }).on('line', (line) => {
  words = (JSON.parse(line) as { words?: string }).words;
});
process.stdout.write(`${JSON.stringify({ port: Number(new URL(fake.url).port) })}\n`);
process.on('SIGTERM', () => void fake.close().then(() => process.exit(0)));
