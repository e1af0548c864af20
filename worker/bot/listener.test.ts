import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { silencePcm } from '../../lib/pcm.ts';
import { tonePcm } from '../../test/fakes/audio.ts';
import { MemoryRoom } from '../../test/fakes/memory-room.ts';
import { STAGE_CONFIG, withTurns } from '../../test/fakes/stage-config.ts';
import { loadConfig } from '../config.ts';
import { scriptedProviders } from '../../test/fakes/scripted-providers.ts';
import { quietHooks } from './hooks.ts';
import type { InterviewConfig } from './interview.ts';
import { Listener, type HeardTurn } from './listener.ts';
import { createListener, planListening } from './listening.ts';
import { Playback } from './playback.ts';
import { energyFrameVad, type FrameVad } from './turns/frame-vad.ts';
import { TurnTranscriber } from './turns/transcriber.ts';
import type { TurnCompletionModel } from './turns/types.ts';

/**
 * The listener on its own, built by the factory from a configuration as the bot builds it, fed by
 * a memory room on fake timers: what is decided from the settings, the idle timeout counted from
 * the end of the bot's audio, and the bound on audio waiting to be heard during a flood.
 */
const RATE = 16_000;

const tone = (ms: number): Buffer => tonePcm(ms, RATE, 220, 0.3);

const CONFIG = STAGE_CONFIG;

function listen(
  options: {
    config?: InterviewConfig;
    hooks?: typeof quietHooks;
    onBargeIn?: () => void;
    onBargeInSettled?: (o: 'interruption' | 'backchannel') => void;
    transcripts?: string[];
  } = {},
) {
  const room = new MemoryRoom();
  const playback = new Playback(() => Date.now());
  const abort = new AbortController();
  const listener = createListener(options.config ?? CONFIG, {
    room,
    providers: scriptedProviders({ transcripts: options.transcripts ?? ['first', 'second'] }),
    models: { vad: null, turn: null },
    playback,
    hooks: options.hooks ?? quietHooks,
    language: 'en',
    signal: abort.signal,
    onBargeIn: options.onBargeIn ?? (() => undefined),
    ...(options.onBargeInSettled ? { onBargeInSettled: options.onBargeInSettled } : {}),
    clock: () => Date.now(),
  });
  return { room, playback, listener, close: () => (abort.abort(), listener.close()) };
}

beforeEach(() => {
  vi.useFakeTimers({ now: Date.UTC(2026, 10, 25, 12) });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('listening, planned from the configuration', () => {
  const model: TurnCompletionModel = { completion: () => Promise.resolve(0.9) };

  it('uses the end-of-turn model only when TURN_DETECTION=model and it is loaded', () => {
    expect(planListening(CONFIG, { vad: null, turn: model }).turnModel).toBeNull();
    const withModel = withTurns(CONFIG, { engines: { detection: 'model' } });
    expect(planListening(withModel, { vad: null, turn: model }).turnModel).toBe(model);
    expect(planListening(withModel, { vad: null, turn: null }).turnModel).toBeNull();
  });

  it('bounds the audio waiting to be heard by one utterance, and a stall by the longest silence', () => {
    const plan = planListening(CONFIG, { vad: null, turn: null });
    expect(plan.detector.maxUtteranceBytes).toBe(10 * RATE * 2);
    expect(plan.detector.maxBacklogBytes).toBe(plan.detector.maxUtteranceBytes);
    // The longest silence (nothing held in this configuration, so learning adds nothing), plus a margin.
    expect(plan.listener.stallMs).toBe(1600 + 500);
    // With a hold: the hold, plus what learning the respondent's pauses may add to it, plus a margin.
    const held = planListening(withTurns(CONFIG, { endpointing: { holdMs: 2200 } }), { vad: null, turn: null });
    expect(held.listener.stallMs).toBe(2200 + 600 + 500);
    expect(held.listener.pauseLearning).toEqual({ baseMs: 2200, maxExtraMs: 600 });
    expect(held.detector).toMatchObject({ holdMs: 2200, holdMaxWords: 7, holdMaxVoicedMs: 2500 });
    expect(plan.vad.frameBytes).toBe(640);
    // The model asked ahead of the commit point, and again as the silence grows (issue 21).
    expect(plan.detector).toMatchObject({ modelEarlyMs: 100, modelReaskMs: 400 });
  });

  it('pauses the bot at a speech onset only in pause mode (BARGE_IN_PAUSE_MS, default 64 ms: two Silero frames)', () => {
    const env = {
      WORKER_TOKEN: 'a-long-enough-worker-token',
      BACKEND_URL: 'https://app.example.com',
      OPENAI_API_KEY: 'sk-test',
      ROOM_PROVIDER: 'local',
    };
    const plan = (extra: Record<string, string>) =>
      planListening(loadConfig({ ...env, ...extra }), { vad: null, turn: null }).detector.onsetMs;
    expect(plan({})).toBe(64);
    expect(plan({ BARGE_IN_PAUSE_MS: '0' })).toBe(0);
    expect(plan({ BARGE_IN_MODE: 'stop' })).toBe(0);
    expect(plan({ BARGE_IN: 'false' })).toBe(0);
  });
});

describe('the listener', () => {
  it("counts the idle timeout from the end of the bot's audio, not from when it was sent", async () => {
    const { listener, playback, close } = listen();
    playback.add(3000); // the bot's question plays for 3 s
    let failed: Error | null = null;
    listener.nextTurn(Date.now()).catch((err: Error) => (failed = err));
    await vi.advanceTimersByTimeAsync(7900);
    expect(failed).toBeNull();
    await vi.advanceTimersByTimeAsync(200);
    expect(failed).toMatchObject({ reason: 'idle_timeout' });
    close();
  });

  it('keeps the audio of a flood under the utterance bound while it arrives, and says so once', async () => {
    let bounds = 0;
    const { room, listener, close } = listen({ hooks: { ...quietHooks, utteranceBound: () => bounds++ } });
    const bound = 10 * RATE * 2;
    let peak = 0;
    // 120 messages of 256 KB of speech-loud audio (16 minutes of it), as fast as a socket delivers.
    const loud = tone(8192);
    for (let i = 0; i < 120; i++) {
      room.emit('audio', Buffer.from(loud)); // a new buffer per message, as a socket gives
      peak = Math.max(peak, listener.backlogBytes);
    }
    expect(peak).toBeLessThanOrEqual(bound);
    expect(bounds).toBe(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(listener.backlogBytes).toBeLessThan(640);
    close();
  });

  it('hears a turn whose audio arrives in one burst, and gives turns in order', async () => {
    const { room, listener, close } = listen();
    const since = Date.now();
    room.burst(Buffer.concat([tone(600), silencePcm(500, RATE), tone(600), silencePcm(500, RATE)]), 300);
    const first = listener.nextTurn(since);
    await vi.advanceTimersByTimeAsync(500);
    expect((await first).text).toBe('first');
    expect((await listener.nextTurn(since)).text).toBe('second');
    close();
  });

  it('counts a stall from when a burst has been classified, not from its arrival', async () => {
    // A loaded machine: the VAD takes 40 ms per 20 ms frame, so a 4.4 s burst takes 8.8 s to
    // classify, far more than the stall (2.7 s). The end-of-turn model finds the answer unfinished
    // (0.1), so after the burst only the stall can end the turn: as silence, not at the bound.
    const energy = energyFrameVad(-45);
    const slow: FrameVad = {
      ...energy,
      isSpeech: async (frame, inSpeech) => (await new Promise((r) => setTimeout(r, 40)), energy.isSpeech(frame, inSpeech)),
    };
    const plan = planListening(withTurns(CONFIG, { engines: { detection: 'model' } }), {
      vad: null,
      turn: { completion: () => Promise.resolve(0.1) },
    });
    const room = new MemoryRoom();
    const abort = new AbortController();
    const listener = new Listener({
      room,
      detector: { vad: slow, model: plan.turnModel, settings: plan.detector, clock: () => Date.now() },
      transcriber: new TurnTranscriber({
        batch: scriptedProviders({ transcripts: ['an answer'] }).stt,
        streaming: null,
        signal: abort.signal,
      }),
      playback: new Playback(() => Date.now()),
      settings: plan.listener,
      signal: abort.signal,
      onBargeIn: () => undefined,
      clock: () => Date.now(),
    });
    const arrived = Date.now();
    room.burst(Buffer.concat([silencePcm(3000, RATE), tone(800), silencePcm(600, RATE)]), 640);
    let heard: HeardTurn | Error | null = null;
    listener.nextTurn(arrived).then(
      (t) => (heard = t),
      (err: Error) => (heard = err),
    );
    const stall = plan.listener.stallMs;
    await vi.advanceTimersByTimeAsync(8800 + stall + 500);
    expect(heard).toMatchObject({ reason: 'silence', text: 'an answer' });
    expect((heard as unknown as HeardTurn).decidedAt - arrived).toBeGreaterThanOrEqual(8800 + stall);
    abort.abort();
    listener.close();
  });

  it('keeps a turn open when the words of a pause go on, even when the recogniser takes 800 ms to give them', async () => {
    // A self-hosted recogniser on a CPU decodes a pause in 0.5-1.5 s. The end-of-turn model says
    // "finished" at every pause; "The main problem was" plainly is not: the turn must wait for those
    // words (TURN_WORDS_WAIT_MS), hear them go on, and end only after the second half. With the old
    // 300 ms wait the model's "finished" stood alone and the half sentence was taken as the answer.
    const run = async (wordsWaitMs: number): Promise<string[]> => {
      const config = withTurns(CONFIG, { engines: { detection: 'model', sttMode: 'realtime' }, endpointing: { wordsWaitMs } });
      const room = new MemoryRoom();
      const abort = new AbortController();
      const listener = createListener(config, {
        room,
        providers: scriptedProviders({ segments: ['The main problem was', 'the export to spreadsheets.'], sttDelayMs: 800 }),
        models: { vad: null, turn: { completion: () => Promise.resolve(0.9) } },
        playback: new Playback(() => Date.now()),
        hooks: quietHooks,
        language: 'en',
        signal: abort.signal,
        onBargeIn: () => undefined,
        clock: () => Date.now(),
      });
      const since = Date.now();
      void room.speak(Buffer.concat([tone(800), silencePcm(1200, RATE), tone(800), silencePcm(1500, RATE)]));
      const texts: string[] = [];
      const collect = async () => {
        for (;;) texts.push((await listener.nextTurn(since)).text);
      };
      void collect().catch(() => undefined);
      await vi.advanceTimersByTimeAsync(6000);
      abort.abort();
      listener.close();
      return texts;
    };
    expect(await run(1500)).toEqual(['The main problem was the export to spreadsheets.']);
    expect((await run(300))[0]).toBe('The main problem was');
  });

  it('holds a short answer to an open question through a 1.5 s pause, and ends one to a closed question at once (issue 40)', async () => {
    // The end-of-turn model says "finished" at every pause; no language model is asked. The words
    // of the first pause ("We tried a few tools.", four) make it a fragment; the question decides.
    const run = async (question: string | null): Promise<string[]> => {
      const config = withTurns(CONFIG, { engines: { detection: 'model', sttMode: 'realtime' }, endpointing: { holdMs: 2200 } });
      const room = new MemoryRoom();
      const abort = new AbortController();
      const listener = createListener(config, {
        room,
        providers: scriptedProviders({ segments: ['We tried a few tools.', 'Mostly spreadsheets.'] }),
        models: { vad: null, turn: { completion: () => Promise.resolve(0.9) } },
        playback: new Playback(() => Date.now()),
        hooks: quietHooks,
        language: 'en',
        signal: abort.signal,
        onBargeIn: () => undefined,
        clock: () => Date.now(),
      });
      if (question) listener.expectAnswerTo(question);
      const since = Date.now();
      void room.speak(Buffer.concat([tone(1000), silencePcm(1500, RATE), tone(800), silencePcm(3000, RATE)]));
      const texts: string[] = [];
      const collect = async () => {
        for (;;) texts.push((await listener.nextTurn(since)).text);
      };
      void collect().catch(() => undefined);
      await vi.advanceTimersByTimeAsync(7000);
      abort.abort();
      listener.close();
      return texts;
    };
    expect(await run(null)).toEqual(['We tried a few tools. Mostly spreadsheets.']);
    expect(await run('How did you first hear of us?')).toEqual(['We tried a few tools. Mostly spreadsheets.']);
    expect(await run('Did you try other tools?')).toEqual(['We tried a few tools.', 'Mostly spreadsheets.']);
  });

  it('stops the bot on the very frame that completes BARGE_IN_MIN_SPEECH_MS of speech, not one later', async () => {
    // 20 ms frames from t = 0; speech starts at the 5th voiced frame (VAD_MIN_SPEECH_MS 100). The
    // 10th frame (arriving at t = 180 ms) completes 200 ms of speech: the barge-in is due then.
    const start = Date.now();
    let stoppedAt: number | null = null;
    const { room, playback, close } = listen({ onBargeIn: () => (stoppedAt ??= Date.now() - start) });
    playback.add(10_000); // the bot is audible throughout
    void room.speak(tone(600));
    await vi.advanceTimersByTimeAsync(170);
    expect(stoppedAt).toBeNull();
    await vi.advanceTimersByTimeAsync(100);
    expect(stoppedAt).toBe(180);
    close();
  });

  it('with the default BARGE_IN_MIN_SPEECH_MS, pauses the bot for a word as short as an "uh-huh" (160 ms)', async () => {
    // A pause is the first reaction (BARGE_IN_MODE=pause), so it may come as soon as speech starts;
    // 200 ms (the default before) let a short word over the bot go unheeded (bench/turns: 222 ms to stop).
    const { turns } = loadConfig({
      WORKER_TOKEN: 'a-long-enough-worker-token',
      BACKEND_URL: 'https://app.example.com',
      OPENAI_API_KEY: 'sk-test',
      ROOM_PROVIDER: 'local',
    });
    const config = withTurns(CONFIG, { interruption: { minSpeechMs: turns.interruption.minSpeechMs } });
    let paused = false;
    const { room, playback, close } = listen({ config, onBargeIn: () => (paused = true), transcripts: ['uh-huh'] });
    playback.add(10_000);
    void room.speak(tone(160));
    await vi.advanceTimersByTimeAsync(400);
    expect(paused).toBe(true);
    close();
  });

  it('gives the old timing (one frame later) with BARGE_IN_MIN_SPEECH_MS one frame longer', async () => {
    const start = Date.now();
    let stoppedAt: number | null = null;
    const config = withTurns(CONFIG, { interruption: { minSpeechMs: 220 } });
    const { room, playback, close } = listen({ config, onBargeIn: () => (stoppedAt ??= Date.now() - start) });
    playback.add(10_000);
    void room.speak(tone(600));
    await vi.advanceTimersByTimeAsync(300);
    expect(stoppedAt).toBe(200);
    close();
  });

  it('settles speech over the bot as an interruption once BARGE_IN_CONFIRM_MS of it is heard, before the turn ends', async () => {
    const start = Date.now();
    const settled: Array<[string, number]> = [];
    const { room, playback, close } = listen({ onBargeInSettled: (o) => settled.push([o, Date.now() - start]), transcripts: ['mm-hm'] });
    playback.add(10_000);
    void room.speak(Buffer.concat([tone(1000), silencePcm(600, RATE)]));
    await vi.advanceTimersByTimeAsync(2000);
    // Speech starts at the 5th frame (100 ms); the 35th (arriving at 680 ms) completes 700 ms. Its
    // words ("mm-hm") come later and do not undo it.
    expect(settled).toEqual([['interruption', 680]]);
    close();
  });

  it('with BARGE_IN_PAUSE_MS, pauses the bot at a speech onset, before the turn starts, and settles it once with the turn', async () => {
    // 20 ms frames from t = 0: the 2nd voiced frame (t = 20 ms) completes 40 ms, the onset; the turn
    // starts at the 5th (VAD_MIN_SPEECH_MS 100), which must not pause the bot a second time.
    const start = Date.now();
    const calls: Array<[string, number]> = [];
    const config = withTurns(CONFIG, { interruption: { onsetMs: 40 } });
    const { room, playback, close } = listen({
      config,
      onBargeIn: () => calls.push(['paused', Date.now() - start]),
      onBargeInSettled: (o) => calls.push([o, Date.now() - start]),
      transcripts: ['No, that is not what I said.'],
    });
    playback.add(10_000);
    void room.speak(Buffer.concat([tone(400), silencePcm(900, RATE)]));
    await vi.advanceTimersByTimeAsync(2000);
    expect(calls).toEqual([
      ['paused', 20],
      ['interruption', expect.any(Number)],
    ]);
    close();
  });

  it('with BARGE_IN_PAUSE_MS, resumes the bot when silence follows a voiced run too short to be a turn (a click)', async () => {
    const start = Date.now();
    const calls: Array<[string, number]> = [];
    const config = withTurns(CONFIG, { interruption: { onsetMs: 40 } });
    const { room, playback, listener, close } = listen({
      config,
      onBargeIn: () => calls.push(['paused', Date.now() - start]),
      onBargeInSettled: (o) => calls.push([o, Date.now() - start]),
    });
    playback.add(10_000);
    // 60 ms voiced (three frames, under VAD_MIN_SPEECH_MS), then silence: the 5th frame (t = 80 ms)
    // completes 40 ms of it (BARGE_IN_PAUSE_MS), and the onset is over.
    void room.speak(Buffer.concat([tone(60), silencePcm(600, RATE)]));
    await vi.advanceTimersByTimeAsync(1000);
    expect(calls).toEqual([
      ['paused', 20],
      ['backchannel', 80],
    ]);
    // No turn came of it.
    let heard = false;
    void listener.nextTurn(0).then(
      () => (heard = true),
      () => undefined,
    );
    await vi.advanceTimersByTimeAsync(500);
    expect(heard).toBe(false);
    close();
  });

  it('with BARGE_IN_PAUSE_MS, does not resume the bot for a dip of a frame inside a word, so it pauses once', async () => {
    const calls: string[] = [];
    const config = withTurns(CONFIG, { interruption: { onsetMs: 40 } });
    const { room, playback, close } = listen({
      config,
      onBargeIn: () => calls.push('paused'),
      onBargeInSettled: (o) => calls.push(o),
      transcripts: ['Please stop there.'],
    });
    playback.add(10_000);
    void room.speak(Buffer.concat([tone(60), silencePcm(20, RATE), tone(400), silencePcm(900, RATE)]));
    await vi.advanceTimersByTimeAsync(2000);
    expect(calls).toEqual(['paused', 'interruption']);
    close();
  });

  it('with BARGE_IN_PAUSE_MS, does nothing at an onset while the bot is silent, and nothing in stop mode', async () => {
    for (const [audible, mode] of [
      [false, 'pause'],
      [true, 'stop'],
    ] as const) {
      const calls: string[] = [];
      const config = withTurns(CONFIG, { interruption: { onsetMs: 40, mode } });
      const { room, playback, close } = listen({ config, onBargeIn: () => calls.push('paused'), onBargeInSettled: (o) => calls.push(o) });
      if (audible) playback.add(10_000);
      void room.speak(Buffer.concat([tone(60), silencePcm(600, RATE)]));
      await vi.advanceTimersByTimeAsync(1000);
      expect(calls, `${mode}, audible ${audible}`).toEqual([]);
      close();
    }
  });

  it('settles a short backchannel as one, and short words that are not as an interruption', async () => {
    for (const [words, outcome] of [
      ['mm-hm', 'backchannel'],
      ['No, stop.', 'interruption'],
    ] as const) {
      const settled: string[] = [];
      const { room, playback, close } = listen({ onBargeInSettled: (o) => settled.push(o), transcripts: [words] });
      playback.add(10_000);
      void room.speak(Buffer.concat([tone(300), silencePcm(600, RATE)]));
      await vi.advanceTimersByTimeAsync(1500);
      expect(settled, words).toEqual([outcome]);
      close();
    }
  });
});
