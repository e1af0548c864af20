import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readWavPcm, speakWithPiper, spokenTrack, SPEECH_RATE } from '../harness/speech.ts';

/**
 * The Piper voice of the test respondents (test/harness/speech.ts): 16 kHz mono speech that is the
 * same on every run (VITS noise off, sox without dither), so a test that hears it hears the same
 * thing each time; and a respondent track built from it.
 */
describe('test respondents speaking with the Piper voice', () => {
  it('gives the same samples for the same text, run after run', () => {
    const dir = mkdtempSync(join(tmpdir(), 'piper-voice-'));
    const text = 'The reports are clear, but exporting them takes too long.';
    speakWithPiper([
      { text, file: join(dir, 'a.wav') },
      { text, file: join(dir, 'b.wav') },
    ]);
    speakWithPiper([{ text, file: join(dir, 'c.wav') }]);
    const a = readFileSync(join(dir, 'a.wav'));
    expect(readFileSync(join(dir, 'b.wav')).equals(a)).toBe(true);
    expect(readFileSync(join(dir, 'c.wav')).equals(a)).toBe(true);
    const { sampleRate, channels, pcm } = readWavPcm(join(dir, 'a.wav'));
    expect({ sampleRate, channels }).toEqual({ sampleRate: SPEECH_RATE, channels: 1 });
    expect(pcm.length / 2 / SPEECH_RATE).toBeGreaterThan(2);
  }, 120_000);

  it('builds a respondent track with Piper answers and pauses where the answers say', () => {
    const track = spokenTrack(['Yes, mostly.', { parts: ['We tried.', 'It did not work.'], pauseMs: 800 }], {
      leadMs: 500,
      gapMs: 1000,
      voice: 'piper',
    });
    expect(track.answers.map((a) => a.text)).toEqual(['Yes, mostly.', 'We tried. It did not work.']);
    expect(track.answers[0]!.startMs).toBe(500);
    expect(track.answers[1]!.startMs).toBeCloseTo(track.answers[0]!.endMs + 1000, 5);
    expect(track.answers[1]!.endMs - track.answers[1]!.startMs).toBeGreaterThan(800 + 1000);
    expect((track.pcm.length / 2 / SPEECH_RATE) * 1000).toBeCloseTo(track.answers[1]!.endMs + 1000, 0);
  }, 120_000);
});
