import type { FrameLocator } from 'playwright-core';

/**
 * A microphone the test speaks into when it is the respondent's turn, as a person does, instead of
 * Chromium's fake device, which plays its file from the moment the page asks for the microphone
 * whatever the interviewer does: its silences are deadlines, and on a loaded machine an answer
 * played over a question that came late (docs/testing.md). The page's own code is unchanged: it
 * still calls getUserMedia (the permission flow runs for real: the fake device is opened and
 * closed) and captures what it gets through its usual path; what it gets is a track of a Web
 * Audio graph of the page's own, silent until `say` plays an answer into it.
 */
interface PageMicrophone {
  say(pcmBase64: string, sampleRate: number): Promise<void>;
}

/** The init script, run in every frame before the page's own scripts (BrowserContext.addInitScript). */
export function installScriptedMicrophone(): void {
  const devices = navigator.mediaDevices as MediaDevices | undefined;
  if (!devices?.getUserMedia) return;
  const original = devices.getUserMedia.bind(devices);
  let graph: { context: AudioContext; destination: MediaStreamAudioDestinationNode } | null = null;
  devices.getUserMedia = async (constraints?: MediaStreamConstraints): Promise<MediaStream> => {
    const real = await original(constraints);
    if (!constraints?.audio) return real;
    for (const track of real.getAudioTracks()) {
      track.stop();
      real.removeTrack(track);
    }
    const context = new AudioContext();
    await context.resume();
    const destination = context.createMediaStreamDestination();
    graph = { context, destination };
    for (const track of destination.stream.getAudioTracks()) real.addTrack(track);
    return real;
  };
  const microphone: PageMicrophone = {
    say: (pcmBase64, sampleRate) => {
      if (!graph) return Promise.reject(new Error('the page has not asked for the microphone yet'));
      const bytes = Uint8Array.from(atob(pcmBase64), (c) => c.charCodeAt(0));
      const samples = new Int16Array(bytes.buffer, 0, bytes.length >> 1);
      const buffer = graph.context.createBuffer(1, samples.length, sampleRate);
      const channel = buffer.getChannelData(0);
      for (let i = 0; i < samples.length; i++) channel[i] = samples[i]! / 32768;
      const source = graph.context.createBufferSource();
      source.buffer = buffer;
      source.connect(graph.destination);
      return new Promise<void>((resolve) => {
        source.onended = () => resolve();
        source.start();
      });
    },
  };
  (window as unknown as { __scriptedMicrophone: PageMicrophone }).__scriptedMicrophone = microphone;
}

/** When an answer played, on the page's clock (performance.now() of the frame, as its timeline marks). */
export interface Spoken {
  startedAt: number;
  endedAt: number;
}

/** Plays one clip (16-bit mono PCM at `sampleRate`) into the page's microphone; resolves once it has played out. */
export async function sayInto(frame: FrameLocator, pcm: Buffer, sampleRate: number): Promise<Spoken> {
  return frame.locator('body').evaluate(
    async (_, a) => {
      const startedAt = performance.now();
      await (window as unknown as { __scriptedMicrophone: PageMicrophone }).__scriptedMicrophone.say(a.clip, a.rate);
      return { startedAt, endedAt: performance.now() };
    },
    { clip: pcm.toString('base64'), rate: sampleRate },
  );
}

/** The page's timeline (main.ts: `window.__serviceTimeline`, performance.now() marks). */
export async function pageTimeline(frame: FrameLocator): Promise<Array<{ name: string; at: number }>> {
  return frame
    .locator('body')
    .evaluate(() => (window as unknown as { __serviceTimeline?: Array<{ name: string; at: number }> }).__serviceTimeline ?? [], undefined, {
      timeout: 5000,
    });
}

/**
 * Plays the answers into the respondent page's microphone in `frame`, one each time the page tells
 * the respondent it is their turn (a `state:listening` mark in its timeline, made once the
 * interviewer has audibly finished), after a person's reaction time; round again when the
 * interviewer asks more than there are answers. A turn handed back while an answer is playing (the
 * interviewer stopped for it) is not answered again, nor one before `after` (page clock: turns the
 * test answered itself). Runs until `stop()`, which resolves with the
 * number of answers played.
 */
export function answerOnEachTurn(
  frame: FrameLocator,
  answers: Buffer[],
  options: { sampleRate: number; reactionMs?: number; after?: number },
): { stop(): Promise<number> } {
  const reactionMs = options.reactionMs ?? 300;
  let stopped = false;
  let played = 0;
  const loop = (async () => {
    let seen = 0;
    let lastEnd = options.after ?? -Infinity;
    while (!stopped) {
      const turns = await pageTimeline(frame)
        .then((marks) => marks.filter((m) => m.name === 'state:listening').map((m) => m.at))
        .catch(() => null);
      if (turns) {
        const fresh = turns.slice(seen);
        seen = turns.length;
        if (fresh.some((at) => at > lastEnd)) {
          await new Promise((r) => setTimeout(r, reactionMs));
          if (stopped) break;
          const clip = answers[played % answers.length]!;
          played++;
          // Resolves when the answer has played out (or the page went away meanwhile).
          const spoken = await sayInto(frame, clip, options.sampleRate).catch(() => null);
          lastEnd = spoken?.endedAt ?? lastEnd;
        }
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return played;
    },
  };
}
