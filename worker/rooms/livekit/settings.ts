import { ConfigError, requiredString, requiredUrl, type Env } from '../../../lib/env.ts';

/** ROOM_PROVIDER=livekit: a LiveKit server of the install's own (docs/worker.md, "LiveKit rooms"). */
export interface LiveKitSettings {
  /** ws(s):// address of the LiveKit server: the spawn answer's room_url, and where the bot joins. */
  url: string;
  apiKey: string;
  apiSecret: string;
}

export function readLiveKitSettings(env: Env): LiveKitSettings {
  const url = requiredUrl(env, 'LIVEKIT_URL', { schemes: ['ws', 'wss'] });
  const apiKey = requiredString(env, 'LIVEKIT_API_KEY', { hint: 'the LiveKit server API key (ROOM_PROVIDER=livekit)' });
  const apiSecret = requiredString(env, 'LIVEKIT_API_SECRET', { hint: 'the secret of LIVEKIT_API_KEY (ROOM_PROVIDER=livekit)' });
  // livekit-server itself refuses secrets shorter than 32 characters; say so here, not at join time.
  if (apiSecret.length < 32)
    throw new ConfigError('LIVEKIT_API_SECRET', 'must be at least 32 characters long (livekit-server refuses shorter secrets)');
  return { url, apiKey, apiSecret };
}
