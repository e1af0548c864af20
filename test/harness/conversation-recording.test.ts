import { describe, expect, it } from 'vitest';
import { parseWav } from '../../lib/pcm.ts';
import { tonePcm } from '../fakes/audio.ts';
import { ConversationRecorder } from './conversation-recording.ts';

/** The demo's recording of both sides: placed in time, bursts laid end to end, one channel per side. */
describe('a conversation recording', () => {
  it('puts the respondent left and the bot right, each where it was heard, bursts end to end', () => {
    const recorder = new ConversationRecorder(0);
    // The respondent speaks one second from 0 s in 20 ms frames of 16 kHz.
    const answer = tonePcm(1000, 16_000);
    for (let i = 0; i < 50; i++) recorder.hear('respondent', answer.subarray(i * 640, (i + 1) * 640), 16_000, i * 20);
    // The bot's second of 24 kHz audio arrives at 2 s in two bursts 10 ms apart: laid end to end.
    const reply = tonePcm(1000, 24_000);
    recorder.hear('bot', reply.subarray(0, reply.length / 2), 24_000, 2000);
    recorder.hear('bot', reply.subarray(reply.length / 2), 24_000, 2010);

    const wav = recorder.wav();
    expect(wav.readUInt16LE(22)).toBe(2);
    expect(wav.readUInt32LE(24)).toBe(24_000);
    const summary = recorder.summary();
    expect(summary.seconds).toBeCloseTo(3, 1);
    expect(summary.respondent.soundSeconds).toBeGreaterThanOrEqual(0.9);
    expect(summary.respondent.soundSeconds).toBeLessThanOrEqual(1.1);
    expect(summary.bot.soundSeconds).toBeGreaterThanOrEqual(0.9);
    expect(summary.bot.soundSeconds).toBeLessThanOrEqual(1.1);

    // Left is silent while the bot speaks (2-3 s), right while the respondent does (0-1 s).
    const frames = wav.subarray(44);
    const at = (second: number, channel: 0 | 1): number => Math.abs(frames.readInt16LE(Math.round(second * 24_000) * 4 + channel * 2));
    const loud = (from: number, channel: 0 | 1): number =>
      Math.max(...Array.from({ length: 200 }, (_, i) => at(from + i / 24_000, channel)));
    expect(loud(0.5, 0)).toBeGreaterThan(1000);
    expect(loud(0.5, 1)).toBe(0);
    expect(loud(2.5, 1)).toBeGreaterThan(1000);
    expect(loud(2.5, 0)).toBe(0);
    expect(() => parseWav(wav)).not.toThrow();
  });
});
