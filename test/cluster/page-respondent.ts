import { launchChromium } from '../harness/browser.ts';
import { waitFor } from '../harness/ports.ts';
import { spokenTrack } from '../harness/speech.ts';

/**
 * A respondent on the api-stub's respondent page in headless Chromium, whose fake microphone plays
 * answers spoken by espeak-ng: open the session's link, press Start, and follow the page until it says
 * the interview is over. What the page showed and recorded comes back for the test to judge.
 */
export interface PageRun {
  /** The page's final state (`<main data-state>`): `finished` for a completed interview. */
  state: string;
  /** The page's own marks (`window.__serviceTimeline`): connect:done:<route>, bot:first_audio, ended:<reason>. */
  marks: string[];
  /** The captions the page showed. */
  captions: string[];
}

const ENDED = new Set(['finished', 'failed', 'error', 'closed']);

export async function runPageInterview(sessionUrl: string, timeoutMs = 150_000): Promise<PageRun> {
  // Five seconds of silence let the interviewer greet and ask before the first answer; the pauses let
  // the bot hear each turn end. Chromium loops the file.
  const track = spokenTrack(['A friend told me about you.', 'Make the setup faster.'], { leadMs: 5000, gapMs: 2500 });
  const browser = await launchChromium({ fakeAudioFile: track.file });
  try {
    const page = await browser.context.newPage();
    await page.goto(sessionUrl);
    const start = page.locator('#start');
    await start.waitFor({ state: 'visible', timeout: 30_000 });
    await start.click();
    const main = page.locator('#interview');
    const marks = async (): Promise<string[]> =>
      page.evaluate(() => (window as unknown as { __serviceTimeline: Array<{ name: string }> }).__serviceTimeline.map((m) => m.name));
    let state = '';
    try {
      await waitFor(async () => ENDED.has((state = (await main.getAttribute('data-state')) ?? '')), {
        timeoutMs,
        intervalMs: 250,
        what: 'the respondent page to end the interview',
      });
    } catch (err) {
      throw new Error(`${(err as Error).message}; the page is in state ${state}, its marks: ${(await marks().catch(() => [])).join(' ')}`, {
        cause: err,
      });
    }
    return { state, marks: await marks(), captions: await page.locator('#captions li .text').allTextContents() };
  } finally {
    await browser.close();
  }
}
