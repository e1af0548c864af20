import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, ROOM_PROVIDERS } from './config.ts';

const minimal = {
  WORKER_TOKEN: 'a-long-enough-worker-token',
  BACKEND_URL: 'https://app.example.com',
  OPENAI_API_KEY: 'sk-test',
  ROOM_PROVIDER: 'local',
};

function problem(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('applies the documented defaults and freezes the result', () => {
    const c = loadConfig(minimal);
    expect(c.port).toBe(7860);
    expect(c.metricsPort).toBe(9090);
    expect(c.joinTimeoutSeconds).toBe(30);
    expect(c.outcomeReportDeadlineSeconds).toBe(21_600);
    expect(c.warmPoolSize).toBe(2);
    expect(c.botSessionsPerProcess).toBe(1);
    expect(c.llm).toEqual({ baseURL: 'https://api.openai.com/v1', apiKey: 'sk-test', model: 'gpt-4o-mini' });
    expect(c.tts.voice).toBe('alloy');
    expect(c.transcriptStore).toMatch(/^file:\/\/\/.*\/transcripts$/);
    expect(c.publicUrl).toBe('http://127.0.0.1:7860');
    if (c.roomProvider !== 'local') throw new Error('expected local rooms');
    // ROOM_TOKEN_SECRET is derived from WORKER_TOKEN, never the token itself.
    expect(c.rooms.tokenSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(c.rooms.tokenSecret).not.toBe(minimal.WORKER_TOKEN);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('takes sessions per bot process from env, and refuses more than one with Daily rooms', () => {
    expect(loadConfig({ ...minimal, BOT_SESSIONS_PER_PROCESS: '4' }).botSessionsPerProcess).toBe(4);
    expect(problem({ ...minimal, BOT_SESSIONS_PER_PROCESS: '0' }).variable).toBe('BOT_SESSIONS_PER_PROCESS');
    expect(problem({ ...minimal, BOT_SESSIONS_PER_PROCESS: '65' }).variable).toBe('BOT_SESSIONS_PER_PROCESS');
    const daily = { ...minimal, ROOM_PROVIDER: 'daily', DAILY_API_KEY: 'daily-key' };
    expect(loadConfig({ ...daily, BOT_SESSIONS_PER_PROCESS: '1' }).botSessionsPerProcess).toBe(1);
    expect(problem({ ...daily, BOT_SESSIONS_PER_PROCESS: '2' }).message).toMatch(
      /BOT_SESSIONS_PER_PROCESS.*must be 1 with ROOM_PROVIDER=daily/,
    );
  });

  it('runs the turn models in threads only when told to', () => {
    expect(loadConfig(minimal).turnModelThread).toBe(false);
    expect(loadConfig({ ...minimal, BOT_SESSIONS_PER_PROCESS: '4' }).turnModelThread).toBe(false);
    expect(loadConfig({ ...minimal, TURN_MODEL_THREAD: 'true' }).turnModelThread).toBe(true);
    expect(problem({ ...minimal, TURN_MODEL_THREAD: 'sometimes' }).variable).toBe('TURN_MODEL_THREAD');
  });

  it('bounds the public port: connection cap and timeouts, from env, checked', () => {
    expect(loadConfig(minimal).publicLimits).toEqual({
      maxConnections: 1000,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 40_000,
      keepAliveTimeoutMs: 65_000,
    });
    const c = loadConfig({
      ...minimal,
      PUBLIC_MAX_CONNECTIONS: '50',
      PUBLIC_HEADERS_TIMEOUT_SECONDS: '2',
      PUBLIC_KEEPALIVE_TIMEOUT_SECONDS: '30',
    });
    expect(c.publicLimits).toEqual({ maxConnections: 50, headersTimeoutMs: 2000, requestTimeoutMs: 32_000, keepAliveTimeoutMs: 30_000 });
    expect(problem({ ...minimal, PUBLIC_MAX_CONNECTIONS: '0' }).variable).toBe('PUBLIC_MAX_CONNECTIONS');
    expect(problem({ ...minimal, PUBLIC_HEADERS_TIMEOUT_SECONDS: 'soon' }).variable).toBe('PUBLIC_HEADERS_TIMEOUT_SECONDS');
  });

  it('bounds the management port the same way, with a small cap (METRICS_*)', () => {
    expect(loadConfig(minimal).managementLimits).toEqual({
      maxConnections: 64,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 15_000,
      keepAliveTimeoutMs: 5000,
    });
    expect(loadConfig({ ...minimal, METRICS_MAX_CONNECTIONS: '20', METRICS_HEADERS_TIMEOUT_SECONDS: '3' }).managementLimits).toMatchObject({
      maxConnections: 20,
      headersTimeoutMs: 3000,
    });
    expect(problem({ ...minimal, METRICS_MAX_CONNECTIONS: 'many' }).variable).toBe('METRICS_MAX_CONNECTIONS');
    expect(problem({ ...minimal, METRICS_KEEPALIVE_TIMEOUT_SECONDS: '0' }).variable).toBe('METRICS_KEEPALIVE_TIMEOUT_SECONDS');
  });

  it("reads the decision's WAIT, preemptive calls and pause learning (issue 21), each with today's behaviour selectable", () => {
    expect(loadConfig(minimal).turns).toMatchObject({
      reply: { llmWaitMaxMs: 4000, llmWaitStepMs: 1500, llmPreemptive: true },
      endpointing: { pauseLearningMaxMs: 600, wordsWaitMs: 1500 },
    });
    const off = loadConfig({
      ...minimal,
      LLM_WAIT_MAX_MS: '0',
      LLM_PREEMPTIVE: 'false',
      TURN_PAUSE_LEARNING_MAX_MS: '0',
      TURN_WORDS_WAIT_MS: '300',
    }).turns;
    expect(off).toMatchObject({
      reply: { llmWaitMaxMs: 0, llmPreemptive: false },
      endpointing: { pauseLearningMaxMs: 0, wordsWaitMs: 300 },
    });
    expect(problem({ ...minimal, TURN_WORDS_WAIT_MS: 'long' }).variable).toBe('TURN_WORDS_WAIT_MS');
    expect(problem({ ...minimal, LLM_WAIT_MAX_MS: '-1' }).variable).toBe('LLM_WAIT_MAX_MS');
    expect(problem({ ...minimal, LLM_WAIT_STEP_MS: '0' }).variable).toBe('LLM_WAIT_STEP_MS');
    expect(problem({ ...minimal, TURN_PAUSE_LEARNING_MAX_MS: '9000' }).variable).toBe('TURN_PAUSE_LEARNING_MAX_MS');
    expect(problem({ ...minimal, LLM_PREEMPTIVE: 'sometimes' }).variable).toBe('LLM_PREEMPTIVE');
  });

  it('refuses BARGE_IN_PAUSE_MS at or above VAD_MIN_SPEECH_MS in pause mode, where it silently turned the onset pause off', () => {
    const err = problem({ ...minimal, VAD_MIN_SPEECH_MS: '60' }); // the default BARGE_IN_PAUSE_MS, 64, is no longer below it
    expect(err.variable).toBe('BARGE_IN_PAUSE_MS');
    expect(err.message).toMatch(/below VAD_MIN_SPEECH_MS \(60\)/);
    expect(problem({ ...minimal, BARGE_IN_PAUSE_MS: '120' }).variable).toBe('BARGE_IN_PAUSE_MS');
    // 0 is the way to turn it off; stop mode and no barge-in never use it.
    expect(loadConfig({ ...minimal, BARGE_IN_PAUSE_MS: '0' }).turns.interruption.onsetMs).toBe(0);
    expect(loadConfig({ ...minimal, BARGE_IN_PAUSE_MS: '120', BARGE_IN_MODE: 'stop' }).turns.interruption.onsetMs).toBe(120);
    expect(loadConfig({ ...minimal, BARGE_IN_PAUSE_MS: '120', BARGE_IN: 'false' }).turns.interruption.enabled).toBe(false);
  });

  it('refuses VAD_SILENCE_MS below TURN_MODEL_SILENCE_MS with the end-of-turn model, where it quietly capped the commit point', () => {
    const err = problem({ ...minimal, VAD_SILENCE_MS: '150' });
    expect(err.variable).toBe('VAD_SILENCE_MS');
    expect(err.message).toMatch(/at least TURN_MODEL_SILENCE_MS \(200\)/);
    expect(problem({ ...minimal, TURN_MODEL_SILENCE_MS: '800' }).variable).toBe('VAD_SILENCE_MS');
    // With silence detection VAD_SILENCE_MS ends the turn, so the commit comes at it at the latest, as it should.
    expect(loadConfig({ ...minimal, VAD_SILENCE_MS: '150', TURN_DETECTION: 'silence' }).turns.endpointing.silenceMs).toBe(150);
  });

  it('refuses BARGE_IN_MIN_SPEECH_MS below VAD_MIN_SPEECH_MS, where it had no effect (a barge-in is judged in a started turn)', () => {
    const err = problem({ ...minimal, BARGE_IN_MIN_SPEECH_MS: '80', BARGE_IN_PAUSE_MS: '0' });
    expect(err.variable).toBe('BARGE_IN_MIN_SPEECH_MS');
    expect(err.message).toMatch(/at least VAD_MIN_SPEECH_MS \(120\)/);
    expect(problem({ ...minimal, VAD_MIN_SPEECH_MS: '200', BARGE_IN_PAUSE_MS: '64' }).variable).toBe('BARGE_IN_MIN_SPEECH_MS');
    expect(loadConfig({ ...minimal, BARGE_IN_MIN_SPEECH_MS: '80', BARGE_IN: 'false' }).turns.interruption.minSpeechMs).toBe(80);
    expect(loadConfig({ ...minimal, VAD_MIN_SPEECH_MS: '200', BARGE_IN_MIN_SPEECH_MS: '200' }).turns.endpointing.minSpeechMs).toBe(200);
  });

  it('reads the hold of patience by design (issue 40), and refuses a hold that would hold nothing', () => {
    expect(loadConfig(minimal).turns.endpointing).toMatchObject({ holdMs: 2200, holdMaxWords: 7, holdMaxVoicedMs: 2500 });
    expect(loadConfig({ ...minimal, TURN_HOLD_MS: '0' }).turns.endpointing.holdMs).toBe(0);
    const err = problem({ ...minimal, TURN_HOLD_MS: '200' });
    expect(err.variable).toBe('TURN_HOLD_MS');
    expect(err.message).toMatch(/above the commit point, TURN_MODEL_SILENCE_MS \(200\)/);
    expect(problem({ ...minimal, TURN_DETECTION: 'silence', VAD_SILENCE_MS: '2500' }).variable).toBe('TURN_HOLD_MS');
    expect(problem({ ...minimal, TURN_HOLD_MAX_WORDS: '0' }).variable).toBe('TURN_HOLD_MAX_WORDS');
    expect(problem({ ...minimal, TURN_HOLD_MAX_VOICED_MS: 'long' }).variable).toBe('TURN_HOLD_MAX_VOICED_MS');
  });

  it("keeps the turn policy's older cross-checks", () => {
    expect(problem({ ...minimal, TURN_MAX_SILENCE_MS: '300', TURN_MODEL_SILENCE_MS: '400', VAD_SILENCE_MS: '700' }).variable).toBe(
      'TURN_MAX_SILENCE_MS',
    );
    expect(problem({ ...minimal, BARGE_IN_CONFIRM_MS: '100' }).variable).toBe('BARGE_IN_CONFIRM_MS');
    expect(problem({ ...minimal, TURN_MODEL_EARLY_MS: '300' }).variable).toBe('TURN_MODEL_EARLY_MS');
  });

  it('defaults to the daily provider, which needs DAILY_API_KEY', () => {
    const { ROOM_PROVIDER: _omit, ...env } = minimal;
    expect(problem(env).variable).toBe('DAILY_API_KEY');
    const c = loadConfig({ ...env, DAILY_API_KEY: 'k' });
    expect(c.roomProvider).toBe('daily');
    expect(c.rooms).toMatchObject({ apiUrl: 'https://api.daily.co/v1', roomTtlSeconds: 3600, domainId: null });
  });

  it('lets each provider key fall back to OPENAI_API_KEY, and names the missing one', () => {
    const { OPENAI_API_KEY: _omit, ...env } = minimal;
    expect(problem(env).variable).toBe('LLM_API_KEY');
    expect(problem({ ...env, LLM_API_KEY: 'a' }).variable).toBe('STT_API_KEY');
    const c = loadConfig({ ...env, LLM_API_KEY: 'a', STT_API_KEY: 'b', TTS_API_KEY: 'c' });
    expect([c.llm.apiKey, c.stt.apiKey, c.tts.apiKey]).toEqual(['a', 'b', 'c']);
  });

  it.each([
    ['WORKER_TOKEN', { WORKER_TOKEN: '' }, /required/],
    ['WORKER_TOKEN', { WORKER_TOKEN: 'short' }, /at least 16/],
    ['BACKEND_URL', { BACKEND_URL: 'not a url' }, /must be a URL/],
    ['BACKEND_URL', { BACKEND_URL: 'ftp://x' }, /https or http/],
    ['PORT', { PORT: '70000' }, /expected an integer from 0 to 65535, got 70000/],
    ['WARM_POOL_SIZE', { WARM_POOL_SIZE: 'two' }, /expected an integer, got "two"/],
    ['ROOM_PROVIDER', { ROOM_PROVIDER: 'zoom' }, /one of "daily", "livekit", "local", got "zoom"/],
    ['LIVEKIT_URL', { ROOM_PROVIDER: 'livekit' }, /required \(a URL with scheme ws or wss\)/],
    ['LIVEKIT_URL', { ROOM_PROVIDER: 'livekit', LIVEKIT_URL: 'https://lk.example.com' }, /ws or wss/],
    ['LIVEKIT_API_KEY', { ROOM_PROVIDER: 'livekit', LIVEKIT_URL: 'wss://lk.example.com' }, /required/],
    ['LIVEKIT_API_SECRET', { ROOM_PROVIDER: 'livekit', LIVEKIT_URL: 'wss://lk.example.com', LIVEKIT_API_KEY: 'APIkey' }, /required/],
    [
      'LIVEKIT_API_SECRET',
      { ROOM_PROVIDER: 'livekit', LIVEKIT_URL: 'wss://lk.example.com', LIVEKIT_API_KEY: 'APIkey', LIVEKIT_API_SECRET: 'short' },
      /at least 32/,
    ],
    ['REDIS_URL', { REDIS_URL: 'http://x' }, /redis or rediss/],
    ['TRANSCRIPT_STORE', { TRANSCRIPT_STORE: 'gs://bucket' }, /file:\/\/<folder> or s3:\/\//],
    ['TLS_KEY_FILE', { TLS_CERT_FILE: '/x.crt' }, /together/],
    ['HEARTBEAT_TTL_MS', { HEARTBEAT_INTERVAL_MS: '1000', HEARTBEAT_TTL_MS: '1500' }, /twice/],
    ['S3_FORCE_PATH_STYLE', { S3_FORCE_PATH_STYLE: 'maybe' }, /true or false/],
  ])('names %s when it is malformed', (variable, overrides, message) => {
    const err = problem({ ...minimal, ...overrides });
    expect(err.variable).toBe(variable);
    expect(err.message).toMatch(message);
    expect(err.message.startsWith(variable)).toBe(true);
  });

  it('reads the LiveKit settings only for ROOM_PROVIDER=livekit', () => {
    const secret = 'a-livekit-secret-of-32-characters-or-more';
    const c = loadConfig({
      ...minimal,
      ROOM_PROVIDER: 'livekit',
      LIVEKIT_URL: 'wss://lk.example.com/',
      LIVEKIT_API_KEY: 'APIkey',
      LIVEKIT_API_SECRET: secret,
    });
    expect(c.roomProvider).toBe('livekit');
    expect(c.rooms).toEqual({ url: 'wss://lk.example.com', apiKey: 'APIkey', apiSecret: secret });
    // Only the chosen transport's settings are read and kept.
    expect(Object.keys(loadConfig(minimal).rooms)).toEqual(['tokenSecret']);
    expect(ROOM_PROVIDERS).toEqual(['daily', 'livekit', 'local']);
  });

  it('never echoes a secret in its errors', () => {
    const err = problem({ ...minimal, WORKER_TOKEN: 'sk-live-tiny' });
    expect(err.message).not.toContain('sk-live-tiny');
  });

  it('accepts s3 stores and TLS files', () => {
    const c = loadConfig({
      ...minimal,
      TRANSCRIPT_STORE: 's3://my-bucket/interviews/',
      S3_ENDPOINT: 'http://127.0.0.1:9000',
      S3_FORCE_PATH_STYLE: 'true',
      TLS_CERT_FILE: '/c',
      TLS_KEY_FILE: '/k',
    });
    expect(c.transcriptStore).toBe('s3://my-bucket/interviews');
    expect(c.s3).toEqual({ endpoint: 'http://127.0.0.1:9000', region: 'us-east-1', forcePathStyle: true });
    expect(c.tls).toEqual({ certFile: '/c', keyFile: '/k' });
    expect(c.publicUrl).toBe('https://127.0.0.1:7860');
  });
});
