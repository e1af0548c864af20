import { createHmac } from 'node:crypto';
import { optionalString, type Env } from '../../../lib/env.ts';
import type { SettingsContext } from '../transport.ts';

/** ROOM_PROVIDER=local: rooms served by the worker itself (docs/worker.md, docs/local-room-protocol.md). */
export interface LocalSettings {
  /** HS256 key of local-room join tokens (ROOM_TOKEN_SECRET); the same on every replica. */
  tokenSecret: string;
}

export function readLocalSettings(env: Env, context: SettingsContext): LocalSettings {
  return {
    // Derived from the shared WORKER_TOKEN by default, so every replica signs and checks the same way.
    tokenSecret:
      optionalString(env, 'ROOM_TOKEN_SECRET') ?? createHmac('sha256', context.workerToken).update('local-room-tokens').digest('base64url'),
  };
}
