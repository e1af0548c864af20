import OpenAI from 'openai';
import type { ProviderEndpoint } from '../config.ts';
import type { CallPolicy } from './policy.ts';

/** An `openai` client for one endpoint, with the SDK's own retries off: the policy is ours. */
export function openaiClient(endpoint: ProviderEndpoint, fetchImpl?: typeof fetch): OpenAI {
  return new OpenAI({
    apiKey: endpoint.apiKey,
    baseURL: endpoint.baseURL,
    maxRetries: 0,
    timeout: 120_000,
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
}

/** The provider name put on spans: `openai` for the real API, else the compatible server's host. */
export function providerName(baseURL: string): string {
  const host = new URL(baseURL).host;
  return host === 'api.openai.com' ? 'openai' : `openai-compatible:${host}`;
}

export interface OpenAIProviderOptions {
  /** An injected client (tests and self-hosted servers pass their own base URL). */
  client: OpenAI;
  model: string;
  /** The name on spans and metrics, see providerName(). */
  provider: string;
  policy: CallPolicy;
}

/** What every OpenAI-compatible provider holds; each subclass adds one capability. */
export abstract class OpenAICompatibleProvider {
  protected readonly client: OpenAI;
  readonly model: string;
  readonly provider: string;
  protected readonly policy: CallPolicy;

  constructor(options: OpenAIProviderOptions) {
    this.client = options.client;
    this.model = options.model;
    this.provider = options.provider;
    this.policy = options.policy;
  }
}
