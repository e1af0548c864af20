import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { hasEspeak, parseWav, speechPcm, tonePcm, wavFromPcm16 } from './audio.ts';
import { FaultPicker, HUGE, withField, wrongBody, type MalformedMode } from './malformed.ts';
import { attachRealtime, type RealtimeFailure } from './openai-realtime.ts';
import { replyByRules, type LlmRule } from './llm-rules.ts';
import type { ChatMessage } from '../../worker/providers/llm.ts';
import { earliestAfter, upstreamRecogniser, UpstreamRecogniserError, type UpstreamRecogniserOptions } from './upstream-recogniser.ts';

/**
 * A local stand-in for an OpenAI-compatible model server, speaking the real HTTP API:
 * POST /v1/chat/completions (JSON or SSE streaming), /v1/audio/transcriptions (multipart),
 * /v1/audio/speech (pcm = 24 kHz 16-bit mono, or wav; real speech from espeak-ng, else tones),
 * and the realtime transcription WebSocket /v1/realtime (openai-realtime.ts, endpoint `stt-stream`).
 * Errors use the OpenAI error shape. Tests script replies (in order, or by the respondent's words:
 * `llmRules`, llm-rules.ts, e.g. WAIT to words that trail off), add latency and inject failures;
 * benches set a latency profile (LatencyProfile) taken from providers' published figures.
 *
 * Transcription does not recognise speech here by itself. It is deterministic instead: the next
 * scripted transcript if any (scriptTranscripts), else "answer <n> (<seconds> s of audio)"; batch
 * and realtime share the script and the count. With `recogniser` set, unscripted transcriptions
 * are heard by a real recogniser behind it (upstream-recogniser.ts: the self-hosted speech server)
 * and the latency profile sets the earliest time their transcript may arrive. The uploaded file
 * must still be a valid WAV (the streamed audio valid base64 PCM16), and its duration is recorded
 * in `requests`.
 */
export type Endpoint = 'chat' | 'stt' | 'tts' | 'stt-stream';

/**
 * For `stt-stream`: `status` refuses the WebSocket upgrade; `hang` commits but never completes;
 * `event` answers the commit with an `error` event or a `...transcription.failed`, or drops the connection.
 */
export interface Failure extends RealtimeFailure {
  /** Answer with this HTTP status (OpenAI error body), or `hang`: never answer. */
  status?: number;
  hang?: boolean;
  /** How many requests fail this way (default 1). */
  count?: number;
}

/**
 * Provider latency on top of `latencyMs`, to model real providers in benches. Unset parts keep
 * today's behaviour (answers at once, chunks `chunkDelayMs` apart).
 */
export interface LatencyProfile {
  /**
   * Batch transcription answers after baseMs + perAudioSecondMs x seconds of audio (with a
   * `recogniser`: at that time, or when the real decode is done if that is later).
   */
  stt?: { baseMs: number; perAudioSecondMs?: number };
  /**
   * Realtime transcription: commit -> `completed` takes baseMs + perAudioSecondMs x seconds (with a
   * `recogniser`: at least that, or the real decode's time if longer); the deltas are spread over
   * what is left after the transcript is known. `interimEveryMs`: while audio arrives, one word of
   * the coming transcript per this much audio (scripted transcripts only; the last word waits for
   * the commit).
   */
  sttStream?: { baseMs: number; perAudioSecondMs?: number; interimEveryMs?: number };
  /** Chat: time to the first token (first SSE chunk, or the whole JSON answer), then between tokens. */
  chat?: { firstTokenMs: number; perTokenMs?: number };
  /** Speech: time to the first byte, then audio sent at `realtimeFactor` x real time (absent: as fast as chunks go). */
  tts?: { firstByteMs: number; realtimeFactor?: number };
}

export interface LoggedRequest {
  endpoint: Endpoint;
  model: string;
  stream?: boolean;
  audioSeconds?: number;
  /** Realtime sessions: the language the session was given. */
  language?: string;
  responseFormat?: string;
  authorization: string | undefined;
}

export interface FakeOpenAIOptions {
  apiKey?: string;
  latencyMs?: Partial<Record<Endpoint, number>>;
  /** `espeak` (real speech), `tone`, or `auto` (espeak when installed). */
  voice?: 'espeak' | 'tone' | 'auto';
  /** Pause between streamed chunks, to make streaming observable. */
  chunkDelayMs?: number;
  profile?: LatencyProfile;
  /** False: no realtime endpoint (upgrades get 404), as with providers that only have batch transcription. */
  realtime?: boolean;
  /** Serve HTTPS (and WSS) with this certificate, e.g. from test/harness/pki.ts. */
  tls?: { cert: string; key: string };
  /** Fault mode: a seeded share of answers on every endpoint comes back malformed (malformed.ts). */
  malformed?: MalformedMode;
  /** Chat answers chosen by the respondent's latest words, before the scripted replies (JSON, so a bench's server process takes them too). */
  llmRules?: LlmRule[];
  /** A real OpenAI-compatible recogniser that hears every unscripted transcription (upstream-recogniser.ts). */
  recogniser?: UpstreamRecogniserOptions;
}

export interface FakeOpenAI {
  url: string;
  requests: LoggedRequest[];
  /** Every request per endpoint, including failed and hanging ones. */
  hits: Record<Endpoint, number>;
  scriptLlm(...replies: string[]): void;
  /** Adds rules that answer by the respondent's latest words (llm-rules.ts), before scripted replies. */
  scriptLlmRules(...rules: LlmRule[]): void;
  scriptTranscripts(...texts: string[]): void;
  failNext(endpoint: Endpoint, failure: Failure): void;
  setLatency(endpoint: Endpoint, ms: number): void;
  setProfile(profile: LatencyProfile): void;
  /** Realtime traffic: upgrades accepted past the key check, and `input_audio_buffer.append` events received. */
  realtimeStats: { connections: number; appendEvents: number };
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function openaiError(res: ServerResponse, status: number, message: string, code: string | null = null): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      error: {
        message,
        type: status === 401 ? 'invalid_request_error' : status >= 500 ? 'server_error' : 'invalid_request_error',
        param: null,
        code,
      },
    }),
  );
}

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const llmScript: string[] = [];
  const llmRules: LlmRule[] = [...(options.llmRules ?? [])];
  const sttScript: string[] = [];
  const failures: Record<Endpoint, Failure[]> = { chat: [], stt: [], tts: [], 'stt-stream': [] };
  const latency: Record<Endpoint, number> = { chat: 0, stt: 0, tts: 0, 'stt-stream': 0, ...options.latencyMs };
  let profile: LatencyProfile = options.profile ?? {};
  const requests: LoggedRequest[] = [];
  const hits: Record<Endpoint, number> = { chat: 0, stt: 0, tts: 0, 'stt-stream': 0 };
  const realtimeStats = { connections: 0, appendEvents: 0 };
  const voice = options.voice === 'tone' ? 'tone' : options.voice === 'espeak' || hasEspeak() ? 'espeak' : 'tone';
  const chunkDelay = options.chunkDelayMs ?? 1;
  const hanging = new Set<ServerResponse>();
  let answers = 0;
  // One picker per endpoint: calls to different endpoints interleave differently from run to run,
  // the calls to one endpoint do not, so each call meets the same fault on every run.
  const fault = (endpoint: Endpoint, n: number) => {
    const mode = options.malformed;
    return mode ? new FaultPicker({ seed: mode.seed + n, rate: mode.rates?.[endpoint] ?? mode.rate }) : undefined;
  };
  const pickers = { chat: fault('chat', 0), stt: fault('stt', 1), tts: fault('tts', 2), 'stt-stream': fault('stt-stream', 3) };
  /** A 200 whose JSON body is malformed: a field broken, or the whole body wrong. */
  const malformedJson = (picker: FaultPicker, res: ServerResponse, good: Record<string, unknown>, fields: string[]) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(picker.pick([true, false]) ? wrongBody(picker) : JSON.stringify(withField(good, picker.pick(fields), picker.junk())));
  };

  const takeFailure = (endpoint: Endpoint, applies: (f: Failure) => boolean = () => true): Failure | undefined => {
    const f = failures[endpoint][0];
    if (!f || !applies(f)) return undefined;
    f.count = (f.count ?? 1) - 1;
    if (f.count <= 0) failures[endpoint].shift();
    return f;
  };

  const chat = async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const json = JSON.parse(body.toString()) as { model?: string; stream?: boolean; messages?: unknown[] };
    if (!json.model || !Array.isArray(json.messages)) return openaiError(res, 400, 'model and messages are required', 'invalid_request');
    requests.push({ endpoint: 'chat', model: json.model, stream: Boolean(json.stream), authorization: req.headers.authorization });
    const reply =
      replyByRules(json.messages as ChatMessage[], llmRules) ??
      llmScript.shift() ??
      (json.stream ? 'NEXT' : 'Summary: the respondent answered every question.');
    const id = `chatcmpl-fake${requests.length}`;
    const created = Math.floor(Date.now() / 1000);
    if (profile.chat) await sleep(profile.chat.firstTokenMs);
    if (!json.stream) {
      const answer = {
        id,
        object: 'chat.completion',
        created,
        model: json.model,
        choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      };
      const picker = pickers.chat;
      if (picker?.strike())
        return malformedJson(picker, res, answer, ['choices', 'choices.0', 'choices.0.message', 'choices.0.message.content']);
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(answer));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const chunk = (delta: Record<string, string>, finish: string | null) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: json.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    res.write(chunk({ role: 'assistant', content: '' }, null));
    const picker = pickers.chat;
    if (picker?.strike()) {
      // One chunk broken (a field wrong, not JSON, huge), or the end sent before the text.
      const good = JSON.parse(chunk({ content: 'word ' }, null).slice(6)) as Record<string, unknown>;
      const bad = picker.pick(['field', 'raw', 'huge', 'early-end'] as const);
      if (bad === 'field')
        res.write(
          `data: ${JSON.stringify(withField(good, picker.pick(['choices', 'choices.0', 'choices.0.delta', 'choices.0.delta.content']), picker.junk()))}\n\n`,
        );
      if (bad === 'raw') res.write(`data: ${wrongBody(picker)}\n\n`);
      if (bad === 'huge') res.write(chunk({ content: HUGE }, null));
      if (bad === 'early-end') res.write(chunk({}, 'stop'));
    }
    for (const piece of reply.match(/\S+\s*/g) ?? [reply]) {
      res.write(chunk({ content: piece }, null));
      await sleep(profile.chat?.perTokenMs ?? chunkDelay);
    }
    res.write(chunk({}, 'stop'));
    res.end('data: [DONE]\n\n');
  };

  const transcribe = async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const form = await new Request('http://fake/', {
      method: 'POST',
      headers: { 'content-type': req.headers['content-type'] ?? '' },
      body: new Uint8Array(body),
    }).formData();
    const model = form.get('model');
    const file = form.get('file');
    if (typeof model !== 'string' || !(file instanceof Blob))
      return openaiError(res, 400, 'file and model are required', 'invalid_request');
    let audioSeconds: number;
    const wav = Buffer.from(await file.arrayBuffer());
    try {
      const { pcm, sampleRate } = parseWav(wav);
      audioSeconds = pcm.length / 2 / sampleRate;
    } catch {
      return openaiError(res, 400, 'The audio file could not be decoded.', 'invalid_value');
    }
    const started = performance.now();
    let text: string;
    try {
      text = await transcriptOf({ endpoint: 'stt', model, audioSeconds, authorization: req.headers.authorization }, wav);
    } catch (err) {
      if (!(err instanceof UpstreamRecogniserError)) throw err;
      return openaiError(res, err.status, err.message, 'upstream_recogniser');
    }
    if (profile.stt) await earliestAfter(started, profile.stt.baseMs + (profile.stt.perAudioSecondMs ?? 0) * audioSeconds);
    if (pickers.stt?.strike()) return malformedJson(pickers.stt, res, { text }, ['text']);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ text }));
  };

  const speech = async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const json = JSON.parse(body.toString()) as { model?: string; input?: string; voice?: string; response_format?: string };
    if (!json.model || !json.input || !json.voice) return openaiError(res, 400, 'model, input and voice are required', 'invalid_request');
    const format = json.response_format ?? 'mp3';
    if (format !== 'pcm' && format !== 'wav') return openaiError(res, 400, `This fake speaks pcm and wav, not ${format}.`, 'invalid_value');
    requests.push({ endpoint: 'tts', model: json.model, responseFormat: format, authorization: req.headers.authorization });
    const pcm = voice === 'espeak' ? speechPcm(json.input, 24_000) : tonePcm(Math.min(3000, Math.max(300, json.input.length * 40)), 24_000);
    const bytes = format === 'wav' ? wavFromPcm16(pcm, 24_000) : pcm;
    if (profile.tts) await sleep(profile.tts.firstByteMs);
    // A chunk is 0.1 s of 24 kHz PCM16: at `realtimeFactor` x real time it is 100 / factor ms apart.
    const gap = profile.tts?.realtimeFactor ? 100 / profile.tts.realtimeFactor : chunkDelay;
    const picker = pickers.tts;
    if (picker?.strike()) {
      // Speech that is not speech: an error page with 200, no bytes, an odd byte count, or far too much.
      const bad = picker.pick(['json', 'empty', 'odd', 'huge'] as const);
      if (bad === 'json') return malformedJson(picker, res, { error: { message: 'overloaded' } }, ['error']);
      res.writeHead(200, { 'content-type': 'audio/pcm' });
      if (bad === 'odd') return res.end(bytes.subarray(0, bytes.length - 1));
      if (bad === 'huge') return res.end(Buffer.alloc(Math.round((40 + json.input.length) * 24_000) * 2));
      return res.end();
    }
    res.writeHead(200, { 'content-type': format === 'wav' ? 'audio/wav' : 'audio/pcm', 'transfer-encoding': 'chunked' });
    for (let i = 0; i < bytes.length; i += 4800) {
      res.write(bytes.subarray(i, i + 4800));
      await sleep(gap);
    }
    res.end();
  };

  /**
   * Logs a transcription (batch or one realtime commit) and gives its text: scripted, else what the
   * real recogniser heard in `wav` (with `recogniser`), else the deterministic placeholder.
   */
  const recognise = options.recogniser ? upstreamRecogniser(options.recogniser) : null;
  const transcriptOf = async (entry: LoggedRequest & { audioSeconds: number }, wav: Buffer | undefined): Promise<string> => {
    requests.push(entry);
    answers++;
    const scripted = sttScript.shift();
    if (scripted !== undefined) return scripted;
    if (recognise && wav) return recognise(wav);
    return `answer ${answers} (${entry.audioSeconds.toFixed(1)} s of audio)`;
  };

  const handler: RequestListener = (req, res) => {
    void (async () => {
      const body = await readBody(req);
      const path = (req.url ?? '').split('?')[0];
      const endpoint: Endpoint | undefined =
        path === '/v1/chat/completions'
          ? 'chat'
          : path === '/v1/audio/transcriptions'
            ? 'stt'
            : path === '/v1/audio/speech'
              ? 'tts'
              : undefined;
      if (!endpoint || req.method !== 'POST') return openaiError(res, 404, `Unknown route ${req.method} ${path}`, 'unknown_url');
      if (options.apiKey && req.headers.authorization !== `Bearer ${options.apiKey}`)
        return openaiError(res, 401, 'Incorrect API key provided.', 'invalid_api_key');
      hits[endpoint]++;
      if (latency[endpoint] > 0) await sleep(latency[endpoint]);
      const failure = takeFailure(endpoint);
      if (failure?.hang) {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      if (failure) return openaiError(res, failure.status ?? 500, `Injected failure (${failure.status ?? 500}).`, 'injected');
      if (endpoint === 'chat') return chat(req, res, body);
      if (endpoint === 'stt') return transcribe(req, res, body);
      return speech(req, res, body);
    })().catch((err: unknown) => {
      if (!res.headersSent) openaiError(res, 500, `fake failed: ${(err as Error).message}`);
      else res.destroy();
    });
  };
  const server: Server = options.tls ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, handler) : createServer(handler);
  const realtime = attachRealtime(server, {
    apiKey: options.apiKey,
    enabled: () => options.realtime !== false,
    failure: (stage) => takeFailure('stt-stream', (f) => (stage === 'upgrade' ? Boolean(f.status) : !f.status)),
    onConnect: () => {
      hits['stt-stream']++;
      realtimeStats.connections++;
    },
    onAppend: () => void realtimeStats.appendEvents++,
    transcribe: (entry, wav) => transcriptOf({ endpoint: 'stt-stream', ...entry }, wav),
    wantsAudio: recognise !== null,
    ...(pickers['stt-stream'] ? { malformed: pickers['stt-stream'] } : {}),
    peekTranscript: () => sttScript[0],
    interimEveryMs: () => profile.sttStream?.interimEveryMs ?? null,
    completionDelayMs: (seconds) =>
      latency['stt-stream'] + (profile.sttStream ? profile.sttStream.baseMs + (profile.sttStream.perAudioSecondMs ?? 0) * seconds : 0),
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}/v1`,
    requests,
    hits,
    scriptLlm: (...replies) => void llmScript.push(...replies),
    scriptLlmRules: (...rules) => void llmRules.push(...rules),
    scriptTranscripts: (...texts) => void sttScript.push(...texts),
    failNext: (endpoint, failure) => void failures[endpoint].push({ ...failure }),
    setLatency: (endpoint, ms) => void (latency[endpoint] = ms),
    setProfile: (next) => void (profile = next),
    realtimeStats,
    close: async () => {
      for (const res of hanging) res.destroy();
      realtime.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
