import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FrameLocator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium, type Chromium } from '../harness/browser.ts';
import { startHostPage, type HostPage } from '../harness/host-page.ts';
import { answerClips } from '../harness/node-interview.ts';
import { waitFor } from '../harness/ports.ts';
import { DRAWN_OUT_OKAY } from '../harness/page-audio-path.ts';
import { answerOnEachTurn, pageTimeline, sayInto, type Spoken } from '../harness/scripted-microphone.ts';
import { SPEECH_RATE } from '../harness/speech.ts';
import { startSpeechServer, type SpeechServerHandle } from '../harness/speech-server.ts';
import { startSystem, TURN_INTERVIEW, TURN_INTERVIEW_ID, type System } from '../harness/system.ts';
import { contentRecall } from '../harness/word-recall.ts';

/**
 * Turn-taking as a respondent meets it, in the respondent page in headless Chromium, with the
 * workers' default pipeline (Silero VAD, Smart Turn v3, realtime speech-to-text through the
 * self-hosted speech server's real recogniser, barge-in that pauses first). The respondent speaks
 * into the page's microphone at moments the test picks from what the page shows
 * (scripted-microphone.ts), with the Piper voice:
 * 1. an answer over the long first question (a barge-in: the bot stops, the page drops the
 *    interviewer's queued audio) with a one-second thinking pause after unfinished words ("What I
 *    think the hardest part was," ... "the documentation, because it was out of date."), which
 *    must not end the turn;
 * 2. a drawn-out "Okay." over the first question, a backchannel the bot rides over (it pauses, then goes
 *    on with the question, which is asked once and not taken as the answer), then an answer with a
 *    1.5 s pause after words that sound complete ("We tried three different vendors." ... "None of
 *    them fit how our team works."): no cut-in. The words there are complete, so what keeps the turn open is
 *    the language model answering WAIT at the pause (issue 21); the stand-in model is scripted to
 *    say so for words ending "vendors." (test/fakes/llm-rules.ts): the script's judgement, not a
 *    model's, and without it the bot asks the next question into the pause.
 */
const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'e2e-turns');
const THINKING = { parts: ['I think the hardest part was,', 'the documentation, because it was out of date.'], pauseMs: 1000 };
const COMPLETE_WORDS = { parts: ['We tried three different vendors.', 'None of them fit how our team works.'], pauseMs: 1500 };
const SECOND = 'The price was fair, but the support team answered slowly.';
/**
 * The backchannel must stop the bot every time for this test to see the pause and the going on: at
 * Piper's own pace "Okay." was sometimes heard as 192 ms of speech through the page, under
 * BARGE_IN_MIN_SPEECH_MS, and the bot rightly spoke on (docs/testing.md); drawn out, it is a barge-in
 * wherever the VAD's frames fall and still no interruption (test/harness/page-audio-path.test.ts).
 */
const BACKCHANNEL = DRAWN_OUT_OKAY;

type HostEvent = { type: string; sessionId: string };
type Mark = { name: string; at: number };
type TranscriptTurn = { speaker: string; text: string; questionId?: string };

let system: System;
let host: HostPage;
let browser: Chromium;
let speech: SpeechServerHandle;
let clips: { thinking: Buffer; complete: Buffer; second: Buffer; backchannel: Buffer };

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const speechStarted = startSpeechServer({}, join(ARTIFACTS, 'logs'));
  const [thinking, complete, second, backchannel] = answerClips([THINKING, COMPLETE_WORDS, SECOND, BACKCHANNEL], 'piper');
  clips = { thinking: thinking!, complete: complete!, second: second!, backchannel: backchannel! };
  speech = await speechStarted;
  system = await startSystem({
    redisUrl: inject('redisUrl'),
    providers: 'fake',
    logDir: join(ARTIFACTS, 'logs'),
    rooms: 'local',
    speech: { url: speech.url, token: speech.token, serves: ['stt'] },
  });
  host = await startHostPage(system.apiBase, system.keys.publishable);
  browser = await launchChromium({ scriptedMicrophone: true, trustSpki: system.workerSpkiHashes });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await host?.close();
  await system?.stop();
  await speech?.stop();
});

/** Opens the host page, starts the turn-taking interview and presses Start in the respondent page. */
async function start(label: string): Promise<{ page: Page; frame: FrameLocator; sessionId: string }> {
  const page = await browser.context.newPage();
  await page.goto(host.url);
  await page.waitForFunction(() => (window as unknown as { hostReady?: boolean }).hostReady === true);
  const sessionId = await page.evaluate(
    ([id, meta]) => (window as unknown as { startInterview(i: string, m: object): Promise<string> }).startInterview(id, meta),
    [TURN_INTERVIEW_ID, { label }] as const,
  );
  const frame = page.frameLocator('iframe');
  await expect.poll(() => frame.locator('#start').isVisible()).toBe(true);
  await frame.locator('#start').click();
  return { page, frame, sessionId };
}

/** Waits until the page shows the interviewer's caption of the first question (its audio starts then). */
async function firstQuestionShown(frame: FrameLocator): Promise<void> {
  await waitFor(async () => (await frame.locator('#captions li .text').allTextContents()).includes(TURN_INTERVIEW.questions[0]!.text), {
    timeoutMs: 60_000,
    intervalMs: 50,
    what: 'the first question at the page',
  });
}

async function finish(
  page: Page,
  frame: FrameLocator,
  sessionId: string,
  label: string,
): Promise<{ timeline: Mark[]; captions: string[]; respondent: TranscriptTurn[] }> {
  const events = () => page.evaluate(() => (window as unknown as { serviceEvents: HostEvent[] }).serviceEvents);
  await waitFor(
    async () => (await events()).some((e) => e.type === 'service:completed' || e.type === 'service:failed' || e.type === 'service:error'),
    { timeoutMs: 180_000, intervalMs: 200, what: 'the interview to end at the page' },
  );
  await page.screenshot({ path: join(ARTIFACTS, `${label}-finished.png`) });
  expect((await events()).at(-1)?.type).toBe('service:completed');
  const timeline = await pageTimeline(frame);
  const captions = await frame.locator('#captions li .text').allTextContents();
  await expect.poll(async () => (await system.retrieve(sessionId)).status, { timeout: 15_000, interval: 100 }).toBe('COMPLETED');
  const session = await system.retrieve(sessionId);
  const transcript = JSON.parse(readFileSync(fileURLToPath(session.response!.transcriptKey), 'utf8')) as { turns: TranscriptTurn[] };
  await system.webhooks.waitFor('interview.completed', sessionId);
  return { timeline, captions, respondent: transcript.turns.filter((t) => t.speaker === 'respondent') };
}

/** The page's timeline and captions beside the screenshots, whether the test passed or not (for a person). */
async function saveTimeline(
  frame: FrameLocator,
  label: string,
  sessionId: string,
  spoken: Record<string, Spoken | undefined> = {},
): Promise<void> {
  const timeline = await pageTimeline(frame).catch((err: unknown) => String(err));
  const captions = await frame
    .locator('#captions li .text')
    .allTextContents()
    .catch((err: unknown) => String(err));
  // The worker's spans of the session on the wall clock (page marks are performance.now() since timeOrigin).
  const timeOrigin = await frame
    .locator('body')
    .evaluate(() => performance.timeOrigin)
    .catch(() => null);
  const spans = system.otlp.spans
    .filter((sp) => sp.attributes['session.id'] === sessionId)
    .map((sp) => ({
      name: sp.name,
      startMs: Number(sp.startNs / 1_000_000n),
      endMs: Number(sp.endNs / 1_000_000n),
      attributes: sp.attributes,
    }));
  writeFileSync(
    join(ARTIFACTS, `${label}-timeline.json`),
    JSON.stringify({ sessionId, timeOrigin, timeline, spoken, captions, spans }, null, 1),
  );
}

/** What the bot did at the page (audio, a caption of its own, a new state) while an answer played. */
function botActsDuring(timeline: Mark[], spoken: Spoken): string[] {
  return timeline
    .filter(
      (m) =>
        m.at > spoken.startedAt &&
        m.at < spoken.endedAt &&
        (m.name === 'bot:first_audio' || m.name === 'caption:bot' || m.name === 'state:speaking'),
    )
    .map((m) => m.name);
}

describe('turn-taking in the respondent page', () => {
  it('a barge-in stops the interviewer at the page, and a thinking pause after unfinished words does not end the answer', async () => {
    const label = 'barge-in';
    const { page, frame, sessionId } = await start(label);
    let rest: { stop(): Promise<number> } | undefined;
    const spoken: Record<string, Spoken> = {};
    try {
      await firstQuestionShown(frame);
      // A second into the question (about seven seconds of it), the respondent starts answering.
      await new Promise((r) => setTimeout(r, 1000));
      const answer = (spoken.answer = await sayInto(frame, clips.thinking, SPEECH_RATE));
      rest = answerOnEachTurn(frame, [clips.second], { sampleRate: SPEECH_RATE, after: answer.endedAt });
      const { timeline, captions, respondent } = await finish(page, frame, sessionId, label);
      // The bot cut its question short when the respondent spoke, and the page dropped what it had queued.
      const interrupted = timeline.find((m) => m.name === 'bot:interrupted');
      expect(interrupted, JSON.stringify(timeline)).toBeDefined();
      expect(interrupted!.at).toBeGreaterThan(answer.startedAt);
      expect(interrupted!.at).toBeLessThan(answer.endedAt);
      // The pause inside the answer did not end it: the bot did nothing until it was over.
      expect(botActsDuring(timeline, { startedAt: interrupted!.at, endedAt: answer.endedAt }), JSON.stringify(timeline)).toEqual([]);
      expect(
        respondent.map((t) => t.questionId),
        JSON.stringify(respondent),
      ).toEqual(['q1', 'q2']);
      expect(contentRecall(THINKING.parts.join(' '), respondent[0]!.text), respondent[0]!.text).toBeGreaterThanOrEqual(0.8);
      expect(contentRecall(SECOND, respondent[1]!.text), respondent[1]!.text).toBeGreaterThanOrEqual(0.8);
      expect(captions.filter((c) => c === TURN_INTERVIEW.questions[0]!.text)).toHaveLength(1);
      // The worker's spans say how each turn ended and when the final text came.
      await system.otlp.waitFor(
        (spans) =>
          ['turn.end', 'stt.final'].every((name) => spans.some((s) => s.name === name && s.attributes['session.id'] === sessionId)),
        15_000,
        `turn.end and stt.final of ${sessionId}`,
      );
    } finally {
      await rest?.stop();
      await saveTimeline(frame, label, sessionId, spoken);
      await page.close();
    }
  }, 300_000);

  it('a backchannel over the question is ridden over, and a pause after words that sound complete is waited out (WAIT), not cut into', async () => {
    if (system.providers.kind !== 'fake') throw new Error("this test scripts the language model's WAIT and needs the stand-in providers");
    system.providers.fake.scriptLlmRules({ words: 'vendors?[^a-z]*$', reply: 'WAIT' });
    const label = 'backchannel';
    const { page, frame, sessionId } = await start(label);
    let rest: { stop(): Promise<number> } | undefined;
    const spoken: Record<string, Spoken> = {};
    try {
      await firstQuestionShown(frame);
      await new Promise((r) => setTimeout(r, 1500));
      const okay = (spoken.okay = await sayInto(frame, clips.backchannel, SPEECH_RATE));
      // The bot pauses for it (the page drops its queued audio), judges it a backchannel, and goes on
      // with the question; the respondent answers once it has been asked to its end.
      const handedOver = (marks: Mark[]): Mark | undefined => {
        const paused = marks.find((m) => m.name === 'bot:interrupted' && m.at > okay.startedAt);
        const resumed = paused && marks.find((m) => m.name === 'bot:first_audio' && m.at > paused.at);
        return resumed && marks.find((m) => m.name === 'state:listening' && m.at > resumed.at);
      };
      await waitFor(async () => handedOver(await pageTimeline(frame)) !== undefined, {
        timeoutMs: 60_000,
        intervalMs: 50,
        what: 'the bot to pause for the backchannel, go on, and finish the question',
      });
      await new Promise((r) => setTimeout(r, 300));
      const answer = (spoken.answer = await sayInto(frame, clips.complete, SPEECH_RATE));
      rest = answerOnEachTurn(frame, [clips.second], { sampleRate: SPEECH_RATE, after: answer.endedAt });
      const { timeline, captions, respondent } = await finish(page, frame, sessionId, label);

      // The backchannel paused the bot once; it was not stopped again before the answer.
      expect(
        timeline.filter((m) => m.name === 'bot:interrupted' && m.at < answer.startedAt),
        JSON.stringify(timeline),
      ).toHaveLength(1);
      // "Your turn" waited for the end of the question: not shown while the bot was paused, nor
      // before its words went on (the page holds its "listening" through the pause).
      const paused = timeline.find((m) => m.name === 'bot:interrupted' && m.at > okay.startedAt)!;
      const resumed = timeline.find((m) => m.name === 'bot:first_audio' && m.at > paused.at)!;
      expect(
        timeline.filter((m) => m.name === 'state:listening' && m.at > okay.startedAt && m.at < resumed.at),
        JSON.stringify(timeline),
      ).toEqual([]);
      // Asked once, and "Okay." is no answer: the respondent's turns are the two answers.
      expect(captions.filter((c) => c === TURN_INTERVIEW.questions[0]!.text)).toHaveLength(1);
      expect(
        respondent.map((t) => t.questionId),
        JSON.stringify(respondent),
      ).toEqual(['q1', 'q2']);
      // No cut-in: nothing from the bot while the answer, pause included, was being said; one turn holds both parts.
      expect(botActsDuring(timeline, answer), JSON.stringify(timeline)).toEqual([]);
      expect(contentRecall(COMPLETE_WORDS.parts.join(' '), respondent[0]!.text), respondent[0]!.text).toBeGreaterThanOrEqual(0.8);
      expect(contentRecall(SECOND, respondent[1]!.text), respondent[1]!.text).toBeGreaterThanOrEqual(0.8);
    } finally {
      await rest?.stop();
      await saveTimeline(frame, label, sessionId, spoken);
      await page.close();
    }
  }, 300_000);
});
