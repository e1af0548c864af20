import { roomKind } from '../../api-stub/respondent/client/room.ts';
import { runLiveKitRespondent, type LiveKitRespondentResult } from './livekit-respondent.ts';
import { runRespondent, type RoomTimeline } from './room-client.ts';
import { SPEECH_RATE, spokenTrack, type SpokenAnswer } from './speech.ts';
import type { ConversationRecorder } from './conversation-recording.ts';
import type { System } from './system.ts';

/**
 * One interview driven from Node the way the respondent page drives it: create a session with the
 * server SDK (publishable key), open sessionUrl (CLICKED), call connect, join the room and answer
 * each question with spoken answers (espeak-ng, or the Piper voice). Used by the demo and the
 * benchmark; it reports what happened with times (performance.now() ms) rather than printing
 * anything itself, and can hand both sides' audio to a ConversationRecorder.
 */
export interface InterviewStep {
  at: number;
  kind: 'status' | 'connect' | 'state' | 'caption' | 'ended';
  text: string;
}

export interface NodeInterview {
  sessionId: string;
  sessionUrl: string;
  route: string;
  roomUrl: string;
  connectStarted: number;
  connectMs: number;
  room: RoomTimeline;
  steps: InterviewStep[];
}

export const DEFAULT_ANSWERS = ['A friend told me about you.', 'Make the setup faster.', 'Nothing else, thanks.'];

/** Each answer's samples, cut from one spoken track (espeak-ng unless `voice` says piper). */
export function answerClips(texts: SpokenAnswer[], voice: 'espeak' | 'piper' = 'espeak'): Buffer[] {
  const track = spokenTrack(texts, { leadMs: 0, gapMs: 0, voice });
  return track.answers.map((a) =>
    track.pcm.subarray(Math.round((a.startMs * SPEECH_RATE) / 1000) * 2, Math.round((a.endMs * SPEECH_RATE) / 1000) * 2),
  );
}

export async function runNodeInterview(
  system: System,
  options: {
    answers?: Buffer[];
    metadata?: Record<string, unknown>;
    onStep?: (step: InterviewStep) => void;
    recorder?: ConversationRecorder;
    timeoutMs?: number;
  } = {},
): Promise<NodeInterview> {
  const steps: InterviewStep[] = [];
  const step = (kind: InterviewStep['kind'], text: string, at = performance.now()): void => {
    const s = { at, kind, text };
    steps.push(s);
    options.onStep?.(s);
  };
  const status = async (sessionId: string, why: string): Promise<void> =>
    step('status', `${(await system.retrieve(sessionId)).status} (${why})`);

  const created = await system.server.sessions.create({
    interviewId: system.interviewId,
    metadata: options.metadata ?? { source: 'demo' },
  });
  await status(created.sessionId, 'session created with the publishable key');
  const page = await fetch(created.sessionUrl, { headers: { accept: 'text/html' } });
  if (!page.ok) throw new Error(`the respondent page answered ${page.status}`);
  await page.text();
  await status(created.sessionId, 'the respondent opened sessionUrl');

  const connect = async (): Promise<{
    res: Response;
    answer: { room_url?: string; token?: string; transport?: string; route?: string; error?: string; message?: string };
  }> => {
    const res = await fetch(`${system.apiBase}/api/v2/sdk/connect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        publishableKey: system.keys.publishable,
        interviewId: system.interviewId,
        sessionId: created.sessionId,
        metadata: {},
      }),
    });
    return {
      res,
      answer: (await res.json()) as {
        room_url?: string;
        token?: string;
        transport?: string;
        route?: string;
        error?: string;
        message?: string;
      },
    };
  };
  let connectStarted = performance.now();
  let { res, answer } = await connect();
  // No warm bot yet (503 with Retry-After, e.g. a worker still warming its pool on a busy machine):
  // retry as the page's Try again would, for up to two minutes.
  for (const giveUpAt = performance.now() + 120_000; res.status === 503 && performance.now() < giveUpAt;) {
    const waitS = Number(res.headers.get('retry-after') ?? 2);
    step('connect', `${answer.error ?? res.status}: retrying in ${waitS} s`);
    await new Promise((r) => setTimeout(r, waitS * 1000));
    connectStarted = performance.now();
    ({ res, answer } = await connect());
  }
  const connectMs = performance.now() - connectStarted;
  if (!res.ok || !answer.room_url || !answer.token)
    throw new Error(`connect answered ${res.status}: ${answer.error ?? ''} ${answer.message ?? ''}`);
  step('connect', `route ${answer.route}, room ${answer.room_url}, spawn answered in ${connectMs.toFixed(0)} ms`);
  await status(created.sessionId, 'the pipeline was spawned');

  const answers = options.answers ?? answerClips(DEFAULT_ANSWERS);
  const onEvent = (line: string): void => {
    if (line.startsWith('caption ')) step('caption', line.slice('caption '.length));
    else if (line.startsWith('state ')) step('state', line.slice('state '.length));
  };
  const recorder = options.recorder;
  const onAudio = recorder
    ? (side: 'respondent' | 'bot', pcm: Buffer, rate: number, at: number) => recorder.hear(side, pcm, rate, at)
    : undefined;
  const timeoutMs = options.timeoutMs ?? 120_000;
  // The same choice as the respondent page (room.ts): the answer's transport, else the old guess.
  const room =
    roomKind({ room_url: answer.room_url, token: answer.token, transport: answer.transport }) === 'livekit'
      ? liveKitTimeline(
          await runLiveKitRespondent({
            url: answer.room_url,
            token: answer.token,
            answers,
            reactionMs: 300,
            timeoutMs,
            onEvent,
            ...(onAudio ? { onAudio } : {}),
          }),
        )
      : await runRespondent({
          roomUrl: answer.room_url,
          token: answer.token,
          answers,
          ca: system.ca.certPem,
          timeoutMs,
          onEvent,
          ...(onAudio ? { onAudio } : {}),
        });
  step('ended', `the room ended: ${room.endReason ?? `closed ${room.closeCode}`}`, room.ended ?? performance.now());
  return {
    sessionId: created.sessionId,
    sessionUrl: created.sessionUrl,
    route: String(answer.route),
    roomUrl: answer.room_url,
    connectStarted,
    connectMs,
    room,
    steps,
  };
}

/** Per-turn latency: from the end of each answer to the first audio of the bot's next utterance. */
export function turnLatencies(room: RoomTimeline): number[] {
  return room.answers
    .map((a) => room.botUtterances.find((u) => u.firstAudio > a.finished))
    .map((u, i) => (u ? u.firstAudio - room.answers[i]!.finished : NaN));
}

/** A LiveKit respondent's record in the local room client's shape, for the demo and the bench. */
function liveKitTimeline(r: LiveKitRespondentResult): RoomTimeline {
  return {
    opened: r.joinedAt - r.connectMs,
    ready: r.joinedAt,
    ended: r.endedAt,
    endReason: r.ended,
    closeCode: null,
    outputSampleRate: 24_000,
    botUtterances: r.botUtterances,
    answers: r.answers,
    states: r.states,
    captions: r.captions,
  };
}
