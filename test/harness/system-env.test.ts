import { describe, expect, it } from 'vitest';
import { parseSeed } from '../../api-stub/seed.ts';
import { loadConfig as loadApiStubConfig } from '../../api-stub/config.ts';
import { loadConfig as loadWorkerConfig } from '../../worker/config.ts';
import { apiStubEnv, demoSeed, realProviders, workerEnv } from './system-env.ts';

/** The system's configuration is checked by the parts' own loaders, without starting anything. */
describe('the whole system configuration', () => {
  const base = { PATH: '/usr/bin', HOME: '/root' };

  it('the demo seed passes the api-stub seed schema', () => {
    const seed = parseSeed(demoSeed('https://127.0.0.1:4000/webhooks'));
    expect(seed.workspaces[0]?.deployments[0]?.interview.questions.length).toBe(2);
  });

  it('both workers get a configuration the worker accepts, on the stand-in or on real providers', () => {
    for (const providers of [
      { kind: 'fake', url: 'http://127.0.0.1:5000/v1' },
      { kind: 'real', env: { OPENAI_API_KEY: 'sk-real-000000000000' } },
    ] as const) {
      const env = workerEnv({
        name: 'self-hosted',
        port: 7860,
        metricsPort: 9091,
        token: 'selfhost-0123456789abcdef',
        cert: { certFile: '/tmp/c.crt', keyFile: '/tmp/c.key' },
        redisUrl: 'redis://127.0.0.1:6379',
        redisKeyPrefix: 'self-hosted-1',
        backendUrl: 'http://127.0.0.1:8080',
        providers,
        transcriptDir: '/tmp/transcripts',
        otlpUrl: 'http://127.0.0.1:4318',
        vadSilenceMs: 600,
        logLevel: 'warn',
        base,
      });
      const config = loadWorkerConfig(env);
      expect(config.roomProvider).toBe('local');
      expect(config.metricsPort).toBe(9091);
      expect(config.tls).not.toBeNull();
      expect(config.llm.baseURL).toBe(providers.kind === 'fake' ? providers.url : 'https://api.openai.com/v1');
    }
  });

  it('points the speech providers it is asked to at the self-hosted speech server, with its token, and keeps the language model', () => {
    const env = workerEnv({
      name: 'hosted',
      port: 7860,
      metricsPort: 9091,
      token: 'hosted-0123456789abcdef',
      cert: { certFile: '/tmp/c.crt', keyFile: '/tmp/c.key' },
      redisUrl: 'redis://127.0.0.1:6379',
      redisKeyPrefix: 'hosted-1',
      backendUrl: 'http://127.0.0.1:8080',
      providers: { kind: 'fake', url: 'http://127.0.0.1:5000/v1' },
      transcriptDir: '/tmp/transcripts',
      otlpUrl: 'http://127.0.0.1:4318',
      vadSilenceMs: 600,
      logLevel: 'warn',
      base,
      speech: { url: 'http://127.0.0.1:6000/v1', token: 'speech-token-0123456789', serves: ['stt'] },
    });
    const config = loadWorkerConfig(env);
    expect(config.stt).toMatchObject({ baseURL: 'http://127.0.0.1:6000/v1', apiKey: 'speech-token-0123456789' });
    expect(config.tts.baseURL).toBe('http://127.0.0.1:5000/v1');
    expect(config.llm.baseURL).toBe('http://127.0.0.1:5000/v1');
  });

  it('uses real providers only when their keys are all there, and passes their settings through', () => {
    expect(realProviders({})).toBeNull();
    expect(realProviders({ LLM_API_KEY: 'k1', STT_API_KEY: 'k2' })).toBeNull();
    expect(realProviders({ OPENAI_API_KEY: 'sk-x', LLM_MODEL: 'gpt-4o', PATH: '/bin' })).toEqual({
      OPENAI_API_KEY: 'sk-x',
      LLM_MODEL: 'gpt-4o',
    });
    const own = realProviders({ LLM_API_KEY: 'a', STT_API_KEY: 'b', TTS_API_KEY: 'c', LLM_BASE_URL: 'https://llm.internal/v1' });
    expect(own).toEqual({ LLM_API_KEY: 'a', STT_API_KEY: 'b', TTS_API_KEY: 'c', LLM_BASE_URL: 'https://llm.internal/v1' });
  });

  it('the api-stub configuration routes to the hosted worker over HTTPS and trusts the throwaway CA', () => {
    const config = loadApiStubConfig(
      apiStubEnv({
        port: 8080,
        dbPath: '/tmp/a.sqlite',
        seedPath: '/tmp/seed.json',
        hostedPipelineUrl: 'https://127.0.0.1:7860/',
        hostedPipelineKey: 'hosted-0123456789abcdef',
        caFile: '/tmp/ca.crt',
        kek: Buffer.alloc(32).toString('base64'),
        logLevel: 'warn',
        base,
      }),
    );
    expect(config.routing.hostedPipelineUrl).toBe('https://127.0.0.1:7860/');
    expect(config.routing.pipelineExtraCaFile).toBe('/tmp/ca.crt');
    expect(config.publicUrl).toBe('http://127.0.0.1:8080');
  });
});
