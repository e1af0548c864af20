import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium, type Chromium } from '../harness/browser.ts';
import { startHostPage, type HostPage } from '../harness/host-page.ts';
import { waitFor } from '../harness/ports.ts';
import { spokenTrack } from '../harness/speech.ts';
import { startSystem, TURN_INTERVIEW, TURN_INTERVIEW_ID, type System } from '../harness/system.ts';

/**
 * Turn-taking as a respondent meets it, in the respondent page in headless Chromium, with the
 * workers' default pipeline (Silero VAD, Smart Turn v3, realtime speech-to-text, barge-in). The fake
 * microphone answers the long first question while it is still being asked (a barge-in: the bot
 * stops, the page drops the interviewer's queued audio), and that answer has a one-second thinking
 * pause inside ("What I liked was," ... "I liked the onboarding a lot."), which must not end the turn.
 * Smart Turn hears espeak-ng's en-us "What I liked was," as unfinished (docs/worker.md, "Turn models").
 */
const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'e2e-turns');

type Mark = { name: string; at: number };
type HostEvent = { type: string; sessionId: string };

let system: System;
let host: HostPage;
let browser: Chromium;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  system = await startSystem({ redisUrl: inject('redisUrl'), providers: 'fake', logDir: join(ARTIFACTS, 'logs'), rooms: 'local' });
  // The first question is about seven seconds long and starts about a second after Start: the
  // answer, 4.5 s into the microphone, cuts in. The second answer comes after the second question.
  const track = spokenTrack([{ parts: ['What I liked was,', 'I liked the onboarding a lot.'], pauseMs: 1000 }, 'Make the setup faster.'], { leadMs: 4500, gapMs: 4000 });
  host = await startHostPage(system.apiBase, system.keys.publishable);
  browser = await launchChromium({ fakeAudioFile: track.file, trustSpki: system.workerSpkiHashes });
});

afterAll(async () => {
  await browser?.close();
  await host?.close();
  await system?.stop();
});

describe('turn-taking in the respondent page', () => {
  it('a barge-in stops the interviewer at the page, and a thinking pause does not end the answer', async () => {
    if (system.providers.kind !== 'fake') throw new Error('this test scripts the transcripts and needs the stand-in providers');
    system.providers.fake.scriptTranscripts('What I liked was,', 'I liked the onboarding a lot.', 'Make the setup faster.');
    const page: Page = await browser.context.newPage();
    try {
      await page.goto(host.url);
      await page.waitForFunction(() => (window as unknown as { hostReady?: boolean }).hostReady === true);
      const sessionId = await page.evaluate((id) => (window as unknown as { startInterview(i: string, m: object): Promise<string> }).startInterview(id, { label: 'turns' }), TURN_INTERVIEW_ID);
      const frame = page.frameLocator('iframe');
      await expect.poll(() => frame.locator('#start').isVisible()).toBe(true);
      await frame.locator('#start').click();
      const events = () => page.evaluate(() => (window as unknown as { serviceEvents: HostEvent[] }).serviceEvents);
      await waitFor(async () => (await events()).some((e) => e.type === 'service:completed' || e.type === 'service:failed' || e.type === 'service:error'), { timeoutMs: 90_000, intervalMs: 200, what: 'the interview to end at the page' });
      await page.screenshot({ path: join(ARTIFACTS, 'finished.png') });
      expect((await events()).at(-1)?.type).toBe('service:completed');

      const timeline = await frame.locator('body').evaluate(() => (window as unknown as { __serviceTimeline: Mark[] }).__serviceTimeline);
      const names = timeline.map((m) => m.name);
      // The bot cut its question short when the respondent spoke, and the page dropped what it had queued.
      expect(names).toContain('bot:interrupted');
      const interrupted = timeline.find((m) => m.name === 'bot:interrupted')!;
      const firstAnswerCaption = timeline.find((m) => m.name === 'caption:respondent')!;
      expect(interrupted.at).toBeLessThan(firstAnswerCaption.at);
      // One caption per answer: the pause inside the first did not split it.
      const captions = await frame.locator('#captions li .text').allTextContents();
      expect(captions).toEqual([
        TURN_INTERVIEW.intro,
        TURN_INTERVIEW.questions[0]!.text,
        'What I liked was, I liked the onboarding a lot.',
        TURN_INTERVIEW.questions[1]!.text,
        'Make the setup faster.',
        TURN_INTERVIEW.closing,
      ]);

      await expect.poll(async () => (await system.retrieve(sessionId)).status, { timeout: 15_000, interval: 100 }).toBe('COMPLETED');
      const session = await system.retrieve(sessionId);
      const transcript = JSON.parse(readFileSync(fileURLToPath(session.response!.transcriptKey), 'utf8')) as { turns: Array<{ speaker: string; text: string; questionId?: string }> };
      expect(transcript.turns.filter((t) => t.speaker === 'respondent').map((t) => [t.questionId, t.text])).toEqual([
        ['q1', 'What I liked was, I liked the onboarding a lot.'],
        ['q2', 'Make the setup faster.'],
      ]);
      await system.webhooks.waitFor('interview.completed', sessionId);
      // The worker's spans say how each turn ended and when the final text came.
      await system.otlp.waitFor(
        (spans) => ['turn.end', 'stt.final'].every((name) => spans.some((s) => s.name === name && s.attributes['session.id'] === sessionId)),
        15_000,
        `turn.end and stt.final of ${sessionId}`,
      );
    } finally {
      await page.close();
    }
  }, 150_000);
});
