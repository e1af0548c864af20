import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FrameLocator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium, type Chromium } from '../harness/browser.ts';
import { startHostPage, type HostPage } from '../harness/host-page.ts';
import { waitFor } from '../harness/ports.ts';
import { answerClips } from '../harness/node-interview.ts';
import { answerOnEachTurn } from '../harness/scripted-microphone.ts';
import { SPEECH_RATE } from '../harness/speech.ts';
import { startSpeechServer, type SpeechServerHandle } from '../harness/speech-server.ts';
import { INTERVIEW, startSystem, type System } from '../harness/system.ts';
import { pooledRecall } from '../harness/word-recall.ts';

/**
 * One interview as a respondent meets it, through every part: a customer's page (another origin)
 * uses the browser SDK; the respondent page runs in its iframe in headless Chromium, and answers
 * spoken by the Piper voice go into its microphone each time it says "Your turn"; the api-stub routes the spawn to a worker over
 * HTTPS; the bot asks the deployment's questions in a wss local room; the workers hear the answers
 * through the self-hosted speech server (speech/, its real recogniser, reached by the worker's
 * ordinary client at STT_BASE_URL) and the stored transcript must hold their content words; the
 * language model and the bot's voice stay the stand-in (it injects failures); the session completes; a
 * signed interview.completed arrives and verifies; spans reach the OTLP receiver. Then the same
 * with the workspace's self-host endpoint set, and again after clearing it. Defined once, run over
 * each kind of room (interview.test.ts: the workers' local rooms; livekit-interview.test.ts: LiveKit).
 */
export function interviewSuite(rooms: 'local' | 'livekit'): void {
  const ARTIFACTS = join(process.cwd(), 'test-artifacts', rooms === 'local' ? 'e2e' : 'e2e-livekit');
  // Real decoding on two busy cores takes seconds per answer: wide deadlines, never sleeps.
  const DEADLINE_MS = 300_000;
  // What the respondent says, one answer per question, with enough content words to judge recall:
  // 20 of them. The recogniser hears Piper's "copies" as "cop is" every time (0.95), so one more
  // phrase misheard on starved cores ("takes too long" came back as "Thanks to law" under stress-ng,
  // docs/testing.md) costs 3 words and leaves 0.80, at the bound; audio at the wrong rate or the
  // stand-in's placeholder text scores near 0.
  const ANSWERS = [
    'I heard about the product from a colleague at a conference in Berlin, during a talk on customer research.',
    'The reports are clear, but exporting them to spreadsheets takes too long, so our team copies the numbers by hand.',
  ];

  type HostEvent = { type: string; sessionId: string; reason?: string; code?: string; message?: string };
  type Mark = { name: string; at: number };

  let system: System;
  let host: HostPage;
  let browser: Chromium;
  let speech: SpeechServerHandle;
  let answers: Buffer[];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const speechStarted = startSpeechServer({}, join(ARTIFACTS, 'logs'));
    // The respondent answers when the page says it is their turn (scripted-microphone.ts): a file
    // played from Start on whatever the bot did made its silences deadlines, which a loaded machine
    // missed twice (an answer played over a question, docs/testing.md).
    answers = answerClips(ANSWERS, 'piper');
    speech = await speechStarted;
    system = await startSystem({
      redisUrl: inject('redisUrl'),
      providers: 'fake',
      logDir: join(ARTIFACTS, 'logs'),
      vadSilenceMs: 500,
      rooms,
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

  const hostEvents = (page: Page): Promise<HostEvent[]> =>
    page.evaluate(() => (window as unknown as { serviceEvents: HostEvent[] }).serviceEvents);
  const waitEvent = async (page: Page, type: string, timeoutMs = DEADLINE_MS): Promise<void> => {
    await waitFor(
      async () => {
        const events = await hostEvents(page);
        const failure = events.find((e) => e.type === 'service:error' || e.type === 'service:failed');
        if (failure && type !== failure.type)
          throw new Error(`the page reported ${failure.type}: ${failure.code ?? failure.reason} ${failure.message ?? ''}`);
        return events.some((e) => e.type === type);
      },
      { timeoutMs, intervalMs: 100, what: `${type} at the host page` },
    );
  };

  interface Run {
    sessionId: string;
    events: HostEvent[];
    timeline: Mark[];
    timeOrigin: number;
    captions: string[];
    /** What the page showed as the respondent's words (the recogniser's transcript of each turn). */
    respondentCaptions: string[];
  }

  /**
   * Each worker has one warm bot (WARM_POOL_SIZE 1), and a bot that ended an interview is replaced
   * by a new one that loads its models first: on a loaded machine that takes seconds, and a connect
   * meanwhile is answered no_capacity, as it should be. Each test starts once both pools are warm,
   * since capacity is not what it is about.
   */
  async function bothWorkersWarm(): Promise<void> {
    for (const worker of [system.hosted, system.selfHosted]) {
      await waitFor(
        async () => {
          const text = await (await fetch(`${worker.metricsUrl}/metrics`)).text();
          const line = text.split('\n').find((l) => l.startsWith('worker_idle_slots '));
          return line !== undefined && Number(line.split(' ')[1]) >= 1;
        },
        { timeoutMs: 120_000, intervalMs: 200, what: `an idle warm bot at the ${worker.name} worker` },
      );
    }
  }

  /** Opens the customer's page in a new tab and starts an interview there with the browser SDK. */
  async function openInterview(metadata: object): Promise<{ page: Page; sessionId: string; frame: FrameLocator }> {
    await bothWorkersWarm();
    const page = await browser.context.newPage();
    await page.goto(host.url);
    await page.waitForFunction(() => (window as unknown as { hostReady?: boolean }).hostReady === true);
    const sessionId = await page.evaluate(
      ([id, meta]) => (window as unknown as { startInterview(i: string, m: object): Promise<string> }).startInterview(id, meta),
      [system.interviewId, metadata] as const,
    );
    return { page, sessionId, frame: page.frameLocator('iframe') };
  }

  /** Opens the host page, starts an interview with the SDK, and lets the respondent answer to the end. */
  async function interview(label: string, screenshots: boolean): Promise<Run> {
    const { page, sessionId, frame } = await openInterview({ plan: 'pro', label: 'e2e' });
    let respondent: { stop(): Promise<number> } | undefined;
    try {
      await waitEvent(page, 'service:ready');
      await expect.poll(() => frame.locator('#start').isVisible()).toBe(true);
      if (screenshots) await page.screenshot({ path: join(ARTIFACTS, `${label}-1-ready.png`) });
      await frame.locator('#start').click();
      respondent = answerOnEachTurn(frame, answers, { sampleRate: SPEECH_RATE });
      await waitEvent(page, 'service:speaking');
      if (screenshots) await page.screenshot({ path: join(ARTIFACTS, `${label}-2-speaking.png`) });
      if (screenshots) {
        // The page shows "Your turn" once the question has played out, while the microphone is still silent.
        await expect
          .poll(() => frame.locator('#interview').getAttribute('data-state'), { timeout: 20_000, interval: 50 })
          .toBe('listening');
        // Let the orb's colour transition finish, so the picture shows the state's own colour (green).
        // This only times a picture: on a loaded machine the respondent may already be answering by
        // then (the state above is the assertion), and a picture of another state would mislead.
        const green = await expect
          .poll(() => frame.locator('.orb').evaluate((el) => getComputedStyle(el).backgroundColor), { interval: 50, timeout: 3000 })
          .toBe('rgb(19, 115, 51)')
          .then(
            () => true,
            () => false,
          );
        if (green) await page.screenshot({ path: join(ARTIFACTS, `${label}-3-listening.png`) });
      }
      await waitEvent(page, 'service:listening');
      await waitEvent(page, 'service:completed');
      const answered = await respondent.stop();
      respondent = undefined;
      expect(answered, 'answers the respondent played, one per turn the page gave them').toBeGreaterThanOrEqual(INTERVIEW.questions.length);
      await expect.poll(() => frame.locator('#interview').getAttribute('data-state')).toBe('finished');
      if (screenshots) await page.screenshot({ path: join(ARTIFACTS, `${label}-4-finished.png`) });
      // Marks are performance.now() of the page; timeOrigin puts them on the wall clock of the spans.
      const { timeline, timeOrigin } = await frame.locator('body').evaluate(() => ({
        timeline: (window as unknown as { __serviceTimeline: Mark[] }).__serviceTimeline,
        timeOrigin: performance.timeOrigin,
      }));
      const captions = await frame.locator('#captions li .text').allTextContents();
      const respondentCaptions = await frame.locator('#captions li.caption-respondent .text').allTextContents();
      return { sessionId, events: await hostEvents(page), timeline, timeOrigin, captions, respondentCaptions };
    } finally {
      await respondent?.stop();
      await page.close();
    }
  }

  /**
   * Recall of all answers' content words in what was heard, pooled: the respondent goes round its
   * answers again when asked more, and a follow-up or a turn split at a pause can shift which turn holds which answer.
   */
  const heardRecall = (turns: string[]): number => pooledRecall([{ expected: ANSWERS.join(' '), heard: turns.join(' ') }]);

  /**
   * What a person needs to tell a lost word's cause apart (audio that never reached the bot, or a
   * turn ended too early): the page's timeline, its captions, the stored turns and the session's
   * turn spans, all in milliseconds on one clock (the wall clock), written beside the screenshots.
   */
  function writeDiagnosis(run: Run, label: string, respondentTurns: Array<{ text: string; at: string }>): string {
    const spans = system.otlp.spans
      .filter(
        (s) => s.attributes['session.id'] === run.sessionId && ['turn.end', 'stt.final', 'llm.turn', 'tts.first_byte'].includes(s.name),
      )
      .map((s) => ({
        name: s.name,
        startMs: Number(s.startNs / 1_000_000n),
        endMs: Number(s.endNs / 1_000_000n),
        reason: s.attributes['turn.end_reason'] ?? undefined,
      }))
      .sort((a, b) => a.startMs - b.startMs);
    const timeline = run.timeline.map((m) => ({ name: m.name, atMs: Math.round(run.timeOrigin + m.at) }));
    const diagnosis = { sessionId: run.sessionId, timeline, respondentCaptions: run.respondentCaptions, respondentTurns, spans };
    const file = join(ARTIFACTS, `${label}-diagnosis.json`);
    writeFileSync(file, JSON.stringify(diagnosis, null, 1));
    return file;
  }

  async function expectCompleted(run: Run, route: 'hosted' | 'self_hosted'): Promise<void> {
    // Written now, whatever fails below; rewritten with the stored turns once they are read.
    writeDiagnosis(run, route, []);
    // The page's own record of the connect answer names the route the service chose.
    expect(run.timeline.map((m) => m.name)).toContain(`connect:done:${route}`);
    const types = run.events.map((e) => e.type);
    expect(types.slice(0, 3)).toEqual(['service:ready', 'service:connecting', 'service:started']);
    expect(types).toContain('service:speaking');
    expect(types).toContain('service:listening');
    expect(types.at(-1)).toBe('service:completed');
    expect(run.events.every((e) => e.sessionId === run.sessionId)).toBe(true);
    // The bot asked the deployment's questions, and the page heard its audio.
    for (const q of INTERVIEW.questions) expect(run.captions).toContain(q.text);
    // The page showed what the recogniser heard. Audio sent at the wrong rate (48 kHz labelled 16 kHz)
    // would be heard as noise, so this also checks the rate end to end.
    expect(run.respondentCaptions.length).toBeGreaterThanOrEqual(INTERVIEW.questions.length);
    expect(heardRecall(run.respondentCaptions), JSON.stringify(run.respondentCaptions)).toBeGreaterThanOrEqual(0.8);
    expect(run.timeline.some((m) => m.name === 'bot:first_audio')).toBe(true);
    // The page declares the end only after the closing words ("Thanks, that is all.", about a second
    // of speech) have played, rather than cutting them off when the room ends.
    const lastBotAudio = run.timeline.filter((m) => m.name === 'bot:first_audio').at(-1)!;
    const ended = run.timeline.find((m) => m.name === 'ended:completed')!;
    expect(ended.at - lastBotAudio.at, `the page's timeline: ${join(ARTIFACTS, `${route}-diagnosis.json`)}`).toBeGreaterThan(600);

    // The page may say "finished" a moment before the worker's report lands (it follows the bot
    // leaving the room): poll with a deadline.
    await expect.poll(async () => (await system.retrieve(run.sessionId)).status, { timeout: 15_000, interval: 100 }).toBe('COMPLETED');
    const session = await system.retrieve(run.sessionId);
    expect(session.metadata).toEqual({ plan: 'pro', label: 'e2e' });
    expect(session.clickedAt).not.toBeNull();
    expect(session.response?.summary).toBeTruthy();
    const transcriptKey = session.response!.transcriptKey;
    const transcriptDir = route === 'hosted' ? system.transcriptDirs.hosted : system.transcriptDirs.selfHosted;
    expect(transcriptKey.startsWith('file://')).toBe(true);
    const transcriptPath = fileURLToPath(transcriptKey);
    expect(transcriptPath.startsWith(transcriptDir)).toBe(true);
    expect(existsSync(transcriptPath)).toBe(true);
    const transcript = JSON.parse(readFileSync(transcriptPath, 'utf8')) as {
      sessionId: string;
      turns: Array<{ speaker: string; text: string; at: string }>;
    };
    expect(transcript.sessionId).toBe(run.sessionId);
    const respondentTurns = transcript.turns.filter((t) => t.speaker === 'respondent').map((t) => t.text);
    const diagnosis = writeDiagnosis(
      run,
      route,
      transcript.turns.filter((t) => t.speaker === 'respondent'),
    );
    expect(respondentTurns.length).toBeGreaterThanOrEqual(INTERVIEW.questions.length);
    // The stored transcript holds the respondent's content words (recall, not exact text). The
    // stand-in's placeholder ("answer 1 (2.3 s of audio)") holds none of them.
    expect(
      heardRecall(respondentTurns),
      `${JSON.stringify(respondentTurns)} (timeline and turn spans: ${diagnosis})`,
    ).toBeGreaterThanOrEqual(0.8);

    const webhook = await system.webhooks.waitFor('interview.completed', run.sessionId);
    expect(webhook.event.data).toMatchObject({
      sessionId: run.sessionId,
      interviewId: system.interviewId,
      metadata: { plan: 'pro', label: 'e2e' },
    });
    expect(system.webhooks.rejected).toEqual([]);

    const service = route === 'hosted' ? 'voice-worker-hosted' : 'voice-worker-self-hosted';
    await system.otlp.waitFor(
      (spans) =>
        ['session.start', 'room.connect', 'llm.turn', 'tts.first_byte'].every((name) =>
          spans.some((s) => s.name === name && s.attributes['session.id'] === run.sessionId && s.resource['service.name'] === service),
        ),
      15_000,
      `session.start, room.connect, llm.turn and tts.first_byte of ${run.sessionId} from ${service}`,
    );
    // The bot joined a room of the kind under test, and said how long its connect took.
    const connect = system.otlp.spans.find((s) => s.name === 'room.connect' && s.attributes['session.id'] === run.sessionId)!;
    expect(connect.attributes['room.provider']).toBe(rooms);
    expect(Number(connect.attributes['room.connect_ms'])).toBeGreaterThanOrEqual(0);
  }

  describe(`one interview through every part, in ${rooms} rooms`, () => {
    it('runs on the hosted pipeline: page, SDK events, COMPLETED, signed webhook, transcript, spans', async () => {
      const run = await interview('hosted', true);
      await expectCompleted(run, 'hosted');
      // The words came from the speech server's recogniser (the worker's realtime client at
      // STT_BASE_URL), never from the stand-in.
      if (system.providers.kind !== 'fake') throw new Error("this test reads the stand-in's request log");
      expect(system.providers.fake.requests.filter((r) => r.endpoint === 'stt' || r.endpoint === 'stt-stream')).toEqual([]);
      expect(await speech.metric('speech_requests_total', { endpoint: 'realtime', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    }, 480_000);

    it('the host page hangs up through the SDK: the page leaves the room, the bot reports it, interview.failed arrives signed', async () => {
      const { page, sessionId, frame } = await openInterview({ plan: 'pro' });
      try {
        await frame.locator('#start').click();
        await waitEvent(page, 'service:speaking');
        await page.evaluate(() => (window as unknown as { mounted: { hangup(): void } }).mounted.hangup());
        await waitEvent(page, 'service:completed');
        expect((await hostEvents(page)).at(-1)).toMatchObject({ type: 'service:completed', reason: 'hangup', sessionId });
        await expect.poll(() => frame.locator('#state-detail').textContent()).toContain('You left the interview');

        const failed = await system.webhooks.waitFor('interview.failed', sessionId);
        expect(failed.event.data).toMatchObject({ sessionId, reason: 'respondent_hangup' });
        const session = await system.retrieve(sessionId);
        expect(session.status).toBe('STARTED');
        expect(session.response).toBeNull();
      } finally {
        await page.close();
      }
    }, 180_000);

    it('offers Try again when the interviewer fails, and the retry runs a fresh interviewer to COMPLETED', async () => {
      if (system.providers.kind !== 'fake') throw new Error('this test injects a provider failure and needs the stand-in providers');
      // Text-to-speech answers 500 twice: the greeting fails even after the worker's one retry.
      system.providers.fake.failNext('tts', { status: 500, count: 2 });
      const { page, sessionId, frame } = await openInterview({ plan: 'pro' });
      let respondent: { stop(): Promise<number> } | undefined;
      try {
        await frame.locator('#start').click();
        respondent = answerOnEachTurn(frame, answers, { sampleRate: SPEECH_RATE });
        await waitEvent(page, 'service:failed');
        await expect.poll(() => frame.locator('#interview').getAttribute('data-state')).toBe('failed');
        await expect.poll(() => frame.locator('#retry').isVisible()).toBe(true);
        await page.screenshot({ path: join(ARTIFACTS, 'retry-1-failed.png') });
        const failed = await system.webhooks.waitFor('interview.failed', sessionId);
        expect((await system.retrieve(sessionId)).status).toBe('STARTED');

        const before = (await hostEvents(page)).length;
        await bothWorkersWarm();
        await frame.locator('#retry').click();
        await waitFor(async () => (await hostEvents(page)).slice(before).some((e) => e.type === 'service:completed'), {
          timeoutMs: DEADLINE_MS,
          intervalMs: 100,
          what: 'service:completed after Try again',
        });
        const after = (await hostEvents(page)).slice(before).map((e) => e.type);
        expect(after).not.toContain('service:error');
        expect(after).toContain('service:started');
        await expect.poll(async () => (await system.retrieve(sessionId)).status, { timeout: 15_000, interval: 100 }).toBe('COMPLETED');
        const session = await system.retrieve(sessionId);
        expect(session.response?.summary).toBeTruthy();
        const completed = await system.webhooks.waitFor('interview.completed', sessionId);
        expect(completed.event.created).toBeGreaterThanOrEqual(failed.event.created);
      } finally {
        await respondent?.stop();
        await page.close();
      }
    }, 480_000);

    it('routes to the self-hosted worker when the endpoint is set, and back to the hosted pipeline when it is cleared', async () => {
      await system.setSelfHost();
      const selfHosted = await interview('self-hosted', false);
      await expectCompleted(selfHosted, 'self_hosted');

      await system.clearSelfHost();
      const back = await interview('cleared', false);
      await expectCompleted(back, 'hosted');
    }, 900_000);
  });
}
