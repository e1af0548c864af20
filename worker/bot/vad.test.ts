import { describe, expect, it } from 'vitest';
import { silencePcm, tonePcm } from '../../test/fakes/audio.ts';
import { EnergyVad } from './vad.ts';

const options = { sampleRate: 16_000, thresholdDbfs: -45, silenceMs: 300, minSpeechMs: 100 };

describe('EnergyVad', () => {
  it('hears speech start after minSpeechMs and its end after silenceMs of quiet', () => {
    const vad = new EnergyVad(options);
    expect(vad.push(silencePcm(500, 16_000))).toEqual([]);
    expect(vad.push(tonePcm(80, 16_000))).toEqual([]);
    expect(vad.push(tonePcm(40, 16_000))).toEqual(['speech_start']);
    expect(vad.push(silencePcm(280, 16_000))).toEqual([]);
    expect(vad.push(silencePcm(20, 16_000))).toEqual(['speech_end']);
  });

  it('ignores a click shorter than minSpeechMs and quiet noise under the threshold', () => {
    const vad = new EnergyVad(options);
    expect(vad.push(Buffer.concat([tonePcm(40, 16_000), silencePcm(200, 16_000)]))).toEqual([]);
    expect(vad.push(tonePcm(1000, 16_000, 440, 0.002))).toEqual([]); // about -57 dBFS
  });

  it('keeps a turn open across pauses shorter than silenceMs', () => {
    const vad = new EnergyVad(options);
    const events = vad.push(Buffer.concat([tonePcm(200, 16_000), silencePcm(200, 16_000), tonePcm(200, 16_000), silencePcm(400, 16_000)]));
    expect(events).toEqual(['speech_start', 'speech_end']);
  });

  it('gives the same events whatever the frame size', () => {
    const audio = Buffer.concat([silencePcm(100, 16_000), tonePcm(300, 16_000), silencePcm(400, 16_000)]);
    for (const size of [2, 318, 640, 1000, 7777]) {
      const vad = new EnergyVad(options);
      const events = [];
      for (let i = 0; i < audio.length; i += size) events.push(...vad.push(audio.subarray(i, i + size)));
      expect(events).toEqual(['speech_start', 'speech_end']);
    }
  });
});
