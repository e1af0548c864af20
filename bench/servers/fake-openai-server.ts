import { startFakeOpenAI, type FakeOpenAIOptions } from '../../test/fakes/openai-compatible.ts';

/**
 * The stand-in model provider in its own process, as a remote provider is: its work (and its
 * timers) never share an event loop with the bench's real-time respondent. FAKE_OPENAI_OPTIONS is
 * the JSON of FakeOpenAIOptions (with `recogniser`, transcriptions are heard by the speech server
 * behind it). Prints `{"port": N}` once listening.
 */
const options = JSON.parse(process.env.FAKE_OPENAI_OPTIONS ?? '{}') as FakeOpenAIOptions;
const fake = await startFakeOpenAI(options);
process.stdout.write(`${JSON.stringify({ port: Number(new URL(fake.url).port) })}\n`);
process.on('SIGTERM', () => void fake.close().then(() => process.exit(0)));
