import OpenAI from 'openai';
import type { ProviderEndpoint } from '../config.ts';

/** An `openai` client for one endpoint, with the SDK's own retries off: the policy is ours. */
export function openaiClient(endpoint: ProviderEndpoint, fetchImpl?: typeof fetch): OpenAI {
  return new OpenAI({ apiKey: endpoint.apiKey, baseURL: endpoint.baseURL, maxRetries: 0, timeout: 120_000, ...(fetchImpl ? { fetch: fetchImpl } : {}) });
}

/** The provider name put on spans: `openai` for the real API, else the compatible server's host. */
export function providerName(baseURL: string): string {
  const host = new URL(baseURL).host;
  return host === 'api.openai.com' ? 'openai' : `openai-compatible:${host}`;
}
