import { describe, expect, it } from 'vitest';
import { ConfigError } from '../lib/env.ts';
import { DEFAULT_MODELS_DIR, loadSpeechConfig } from './config.ts';
import { boundedText, maxTokens, padShort, withoutRepeats } from './decode-bounds.ts';

const TOKEN = 'a-speech-token-of-32-characters-';

describe('loadSpeechConfig', () => {
  it('has defaults that need only the token', () => {
    const config = loadSpeechConfig({ SPEECH_TOKEN: TOKEN });
    expect(config).toMatchObject({
      port: 7870,
      metricsPort: 9091,
      modelsDir: DEFAULT_MODELS_DIR,
      threads: 2,
      sttConcurrency: 1,
      queueCapacity: 32,
      maxAudioSeconds: 30,
      realtimeDecode: 'incremental',
      splitPauseMs: 200,
      splitMaxPieceSeconds: 8,
      earlyTailMs: 120,
    });
    expect(loadSpeechConfig({ SPEECH_TOKEN: TOKEN, SPEECH_REALTIME_DECODE: 'whole' }).realtimeDecode).toBe('whole');
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('refuses to start without a token, with a short one, or with one port for both', () => {
    expect(() => loadSpeechConfig({})).toThrow(/^SPEECH_TOKEN: is required/);
    expect(() => loadSpeechConfig({ SPEECH_TOKEN: 'short' })).toThrow(ConfigError);
    expect(() => loadSpeechConfig({ SPEECH_TOKEN: TOKEN, SPEECH_PORT: '8000', SPEECH_METRICS_PORT: '8000' })).toThrow(
      /^SPEECH_METRICS_PORT/,
    );
    expect(() => loadSpeechConfig({ SPEECH_TOKEN: TOKEN, SPEECH_QUEUE_CAPACITY: '-1' })).toThrow(/^SPEECH_QUEUE_CAPACITY/);
    expect(() => loadSpeechConfig({ SPEECH_TOKEN: TOKEN, SPEECH_REALTIME_DECODE: 'streaming' })).toThrow(
      /^SPEECH_REALTIME_DECODE: must be one of incremental, whole/,
    );
    expect(() => loadSpeechConfig({ SPEECH_TOKEN: TOKEN, SPEECH_SPLIT_PAUSE_MS: '20' })).toThrow(/^SPEECH_SPLIT_PAUSE_MS/);
  });
});

describe('decode bounds', () => {
  it('drops the repeated tail of a runaway decode and cuts it to what the audio can hold; a normal one is left alone', () => {
    // What Moonshine gave for a slow Piper "Nothing really, it was easy." (1.76 s): 25 tokens.
    const phrase = [' nothing', ' really', ' it', ' was', ' easy'];
    const runaway = [' Nothing', ' really', ' it', ' was', ' easy', ...phrase, ...phrase, ...phrase, ...phrase];
    expect(maxTokens(1.76)).toBe(16);
    expect(boundedText({ text: runaway.join('').trim(), tokens: runaway }, 1.76)).toEqual({
      text: 'Nothing really it was easy',
      truncated: true,
    });
    const stuck = [' Nothing', ' really', ' it', ' was', ' easy', ...Array(40).fill(' easy')] as string[];
    expect(boundedText({ text: stuck.join('').trim(), tokens: stuck }, 1.3)).toEqual({
      text: 'Nothing really it was easy',
      truncated: true,
    });
    // Past the length with no repeat: cut.
    const long = Array.from({ length: 30 }, (_, i) => ` w${i}`);
    expect(boundedText({ text: long.join('').trim(), tokens: long }, 1.3).text.split(' ')).toHaveLength(13);
    // Within the length, even a real repeat ("no no no") is kept.
    expect(boundedText({ text: 'No no no.', tokens: [' No', ' no', ' no', '.'] }, 1)).toEqual({ text: 'No no no.', truncated: false });
    expect(withoutRepeats([' a', ' b', ' c'])).toEqual([' a', ' b', ' c']);
  });

  it('centres a short segment in a second of silence and leaves longer ones as they are', () => {
    const short = new Float32Array(6400).fill(0.5);
    const padded = padShort(short);
    expect(padded.length).toBe(16_000);
    expect(padded[4799]).toBe(0);
    expect(padded[4800]).toBe(0.5);
    expect(padded[11_199]).toBe(0.5);
    expect(padded[11_200]).toBe(0);
    const long = new Float32Array(20_000);
    expect(padShort(long)).toBe(long);
  });
});
