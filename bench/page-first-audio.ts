import { launchChromium } from '../test/harness/browser.ts';
import { startHostPage } from '../test/harness/host-page.ts';
import { waitFor } from '../test/harness/ports.ts';
import { spokenTrack } from '../test/harness/speech.ts';
import type { System } from '../test/harness/system.ts';

/**
 * The same measure at the respondent page in headless Chromium: from the page's connect call to the
 * first bot audio it queued for playback (its own performance.now() marks), over `runs` interviews.
 */
export async function pageFirstAudio(system: System, runs: number): Promise<number[]> {
  const track = spokenTrack(['A friend told me about you.', 'Make the setup faster.'], { leadMs: 5000, gapMs: 2500 });
  const host = await startHostPage(system.apiBase, system.keys.publishable);
  const browser = await launchChromium({ fakeAudioFile: track.file, trustSpki: system.workerSpkiHashes });
  const out: number[] = [];
  let retries = 0;
  try {
    for (let i = 0; i < runs; i++) {
      const page = await browser.context.newPage();
      await page.goto(host.url);
      await page.waitForFunction(() => (window as unknown as { hostReady?: boolean }).hostReady === true);
      await page.evaluate(
        (id) => (window as unknown as { startInterview(i: string, m: object): Promise<string> }).startInterview(id, { bench: 'page' }),
        system.interviewId,
      );
      const frame = page.frameLocator('iframe');
      await frame.locator('#start').click();
      type Mark = { name: string; at: number };
      const marks = async (): Promise<Mark[]> =>
        frame.locator('body').evaluate(() => (window as unknown as { __serviceTimeline: Mark[] }).__serviceTimeline);
      // The warm slot of the previous run may not be back yet: a no_capacity answer is retried.
      const busy = async (): Promise<boolean> =>
        (await page.evaluate(() => (window as unknown as { serviceEvents: Array<{ type: string; code?: string }> }).serviceEvents)).some(
          (e) => e.type === 'service:error' && e.code === 'no_capacity',
        );
      const seen = { busy: false };
      await waitFor(
        async () => {
          seen.busy = await busy();
          return seen.busy || (await marks()).some((m) => m.name === 'bot:first_audio');
        },
        { timeoutMs: 30_000, what: 'the first bot audio at the page' },
      );
      if (seen.busy) {
        await page.close();
        if (++retries > 20) throw new Error('the worker had no capacity for 20 tries');
        await new Promise((r) => setTimeout(r, 500));
        i--;
        continue;
      }
      const timeline = await marks();
      out.push(timeline.find((m) => m.name === 'bot:first_audio')!.at - timeline.find((m) => m.name === 'connect:start')!.at);
      await page.evaluate(() => (window as unknown as { mounted: { hangup(): void } }).mounted.hangup());
      await page.close();
    }
  } finally {
    await browser.close();
    await host.close();
  }
  return out;
}
