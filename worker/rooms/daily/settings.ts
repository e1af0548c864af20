import { intVar, optionalString, requiredString, requiredUrl, type Env } from '../../../lib/env.ts';

/** ROOM_PROVIDER=daily: hosted rooms through Daily's REST API, the bot through its Python SDK. */
export interface DailySettings {
  apiKey: string;
  apiUrl: string;
  /** The domain id put in self-signed tokens; null: asked from the API at start. */
  domainId: string | null;
  roomTtlSeconds: number;
  /** The interpreter with daily-python that runs the bot's bridge (bridge.py). */
  bridgePython: string;
}

export function readDailySettings(env: Env): DailySettings {
  return {
    apiKey: requiredString(env, 'DAILY_API_KEY', { hint: 'the video-room provider API key (ROOM_PROVIDER=daily)' }),
    apiUrl: requiredUrl(env, 'DAILY_API_URL', { schemes: ['https', 'http'], default: 'https://api.daily.co/v1' }),
    domainId: optionalString(env, 'DAILY_DOMAIN_ID') ?? null,
    roomTtlSeconds: intVar(env, 'DAILY_ROOM_TTL_SECONDS', { default: 3600, min: 300, max: 7 * 86400 }),
    bridgePython: optionalString(env, 'DAILY_BRIDGE_PYTHON') ?? 'python3',
  };
}
