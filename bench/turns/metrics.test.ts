import { describe, expect, it } from 'vitest';
import { summarize, type BotEvent, type ItemPlay } from './metrics.ts';
import { Playback } from './playback.ts';

const play = (id: string, kind: ItemPlay['kind'], speechStartAt: number, speechEndAt: number, longestPauseMs = 0): ItemPlay => ({
  id,
  kind,
  speechStartAt,
  speechEndAt,
  longestPauseMs,
});
const at = (t: number, type: BotEvent['type']): BotEvent => ({ at: t, type });

describe('turn-taking measures', () => {
  it('times end of speech to the first bot audio after it, per answer, and leaves out answers the bot cut in on', () => {
    const plays = [play('a', 'plain', 1000, 3000), play('b', 'short', 10_000, 10_400), play('c', 'plain', 20_000, 23_000)];
    const events = [
      at(3700, 'thinking'),
      at(4200, 'speaking'),
      at(4210, 'audio'),
      at(4230, 'audio'),
      at(10_900, 'audio'),
      at(21_000, 'thinking'),
      at(23_500, 'audio'),
    ];
    const s = summarize(plays, events);
    expect(s.latencies).toEqual([1210, 500]);
    expect(s.cutIns.plainAndShort).toEqual({ count: 1, of: 3 });
  });

  it('counts a cut-in on a thinking pause by its length: up to 1.2 s, and all', () => {
    const plays = [play('p1', 'pause', 0, 3000, 800), play('p2', 'pause', 10_000, 13_000, 1500), play('p3', 'pause', 20_000, 23_000, 1200)];
    // p1: thinking inside the answer; p2: audio inside; p3: only `listening` inside, then a reply after it.
    const events = [at(1900, 'thinking'), at(12_000, 'audio'), at(21_000, 'listening'), at(23_600, 'audio')];
    const s = summarize(plays, events);
    expect(s.cutIns.shortPauses).toEqual({ count: 1, of: 2 });
    expect(s.cutIns.allPauses).toEqual({ count: 2, of: 3 });
    expect(s.ids.cutIn).toEqual(['p1', 'p2']);
    expect(s.audibleCutIns).toEqual({ count: 1, of: 3 }); // only p2's bot spoke into the answer
    expect(s.latencies).toEqual([]); // pause answers do not feed the latency percentiles
  });

  it('times a barge-in from the onset to the interrupt, and misses one with no interrupt within 1.5 s', () => {
    const plays = [play('i1', 'interruption', 5000, 7000), play('i2', 'interruption', 20_000, 22_000)];
    const events = [at(5180, 'interrupt'), at(21_600, 'interrupt')];
    const s = summarize(plays, events);
    expect(s.stopTimes).toEqual([180]);
    expect(s.missedBargeIns).toEqual({ count: 1, of: 2 });
    expect(s.ids.missed).toEqual(['i2']);
  });

  it('calls an interrupt after a backchannel a false stop, and thinking after it taking it as the answer', () => {
    const plays = [
      play('b1', 'backchannel', 5000, 5400),
      play('b2', 'backchannel', 20_000, 20_150),
      play('b3', 'backchannel', 30_000, 30_400),
    ];
    const events = [at(5300, 'interrupt'), at(21_000, 'thinking'), at(34_000, 'interrupt')];
    const s = summarize(plays, events);
    expect(s.falseStops).toEqual({ count: 1, of: 3 });
    expect(s.ids.falseStop).toEqual(['b1']);
    expect(s.backchannelsTakenAsTurn).toEqual({ count: 1, of: 3 });
  });

  it('tells a pause the voice comes back from apart from a stop for good', () => {
    const plays = [play('b1', 'backchannel', 5000, 5400), play('b2', 'backchannel', 20_000, 20_400)];
    // b1: paused at 5250, the voice back at 5900 (after the backchannel ended), then listening.
    // b2: stopped at 20_250, audio only before the backchannel ended, then thinking: stopped for good.
    const events = [
      at(5250, 'interrupt'),
      at(5900, 'audio'),
      at(8000, 'listening'),
      at(20_250, 'interrupt'),
      at(20_300, 'audio'),
      at(21_000, 'thinking'),
      at(22_000, 'audio'),
    ];
    const s = summarize(plays, events);
    expect(s.falseStops).toEqual({ count: 2, of: 2 });
    expect(s.stoppedForGood).toEqual({ count: 1, of: 2 });
    expect(s.ids.stoppedForGood).toEqual(['b2']);
  });
});

describe('simulated playback of the bot audio', () => {
  it('plays chunks one after another at real-time rate from their first arrival, and an interrupt drops the queue', () => {
    const speaker = new Playback();
    speaker.utteranceStarts();
    expect(speaker.push(48_000, 100)).toBe(100); // 1 s of 24 kHz PCM16, heard from its arrival
    expect(speaker.push(48_000, 110)).toBeNull(); // queued behind it
    expect(speaker.endsAt).toBe(2100);
    expect(speaker.playing(2000)).toBe(true);
    speaker.utteranceStarts();
    expect(speaker.push(960, 500)).toBe(2100); // the next utterance is heard when the queue ends
    speaker.drop(600);
    expect(speaker.playing(601)).toBe(false);
    expect(speaker.endsAt).toBe(600);
  });
});

describe('latency by what the bot replied, and the held-out half', () => {
  const FOLLOW_UP = 'Could you tell me a little more about that?';
  it('tells a follow-up the model wrote from the next question after its NEXT and from one with no model call', () => {
    const plays = [play('a', 'plain', 1000, 3000), play('b', 'short', 10_000, 10_400), play('c', 'plain', 20_000, 23_000)];
    const events = [at(3800, 'audio'), at(11_000, 'audio'), at(23_900, 'audio')];
    const captions = [
      { at: 500, text: 'Question 1: tell me about it.' },
      { at: 3700, text: `${FOLLOW_UP}` }, // reply to a: the model wrote a follow-up
      { at: 10_900, text: 'Question 2: and then?' }, // reply to b, which answered the follow-up: no call
      { at: 23_800, text: 'Question 3: last one.' }, // reply to c, asked by question 2: the model said NEXT
    ];
    const s = summarize(plays, events, { captions, followUpText: FOLLOW_UP });
    expect(s.latencyByPath).toEqual({ follow_up: [800], next_without_call: [600], next_after_model: [900] });
    expect(s.latencies).toEqual([800, 600, 900]);
  });

  it('counts cut-ins on held-out pause answers apart, with pauses up to 1.5 s under the aim', () => {
    const plays = [
      { ...play('t1', 'pause', 0, 3000, 800) },
      { ...play('h1', 'pause', 10_000, 13_000, 1500), heldOut: true },
      { ...play('h2', 'pause', 20_000, 23_000, 2000), heldOut: true },
    ];
    const events = [at(11_000, 'thinking'), at(21_500, 'audio')];
    const s = summarize(plays, events);
    expect(s.cutIns.allPauses).toEqual({ count: 0, of: 1 });
    expect(s.heldOutCutIns.shortPauses).toEqual({ count: 1, of: 1 });
    expect(s.heldOutCutIns.allPauses).toEqual({ count: 2, of: 2 });
    expect(s.audibleCutIns).toEqual({ count: 1, of: 3 });
  });
});
