import type { Database } from './db/database.ts';
import { HttpError } from '../lib/errors.ts';
import { classifyKey, findKey } from './store/keys.ts';

/**
 * Key checks of spec section 5. Publishable keys come in the body (session creation, connect);
 * secret keys only as `Authorization: Bearer sk_…`. Every failure is 401 invalid_key, with a
 * message saying what to send instead. Messages never echo the key.
 */
export function authenticatePublishable(db: Database, key: string | undefined): { workspaceId: string } {
  if (key === undefined || key === '') {
    throw new HttpError('invalid_key', 'publishableKey is missing. Send your pk_test_… or pk_live_… key in the body.');
  }
  const shape = classifyKey(key);
  if (shape?.kind === 'secret') {
    throw new HttpError(
      'invalid_key',
      'publishableKey holds a secret key. Never send sk_ keys from clients; rotate it, and use your pk_ key here.',
    );
  }
  const record = shape ? findKey(db, key) : null;
  if (!record || record.kind !== 'publishable') {
    throw new HttpError('invalid_key', 'publishableKey is not a recognized publishable key (pk_test_… or pk_live_…).');
  }
  return { workspaceId: record.workspaceId };
}

export function authenticateSecret(db: Database, authorization: string | undefined): { workspaceId: string } {
  if (!authorization) {
    throw new HttpError('invalid_key', 'Missing Authorization header. Send Authorization: Bearer <your sk_ secret key>.');
  }
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
  if (!match) throw new HttpError('invalid_key', 'The Authorization header must be "Bearer <your sk_ secret key>".');
  const key = match[1]!;
  const shape = classifyKey(key);
  if (shape?.kind === 'publishable') {
    throw new HttpError(
      'invalid_key',
      'Publishable keys cannot read sessions. Call this endpoint from your server with your sk_ secret key.',
    );
  }
  const record = shape ? findKey(db, key) : null;
  if (!record || record.kind !== 'secret') throw new HttpError('invalid_key', 'The bearer token is not a recognized secret key.');
  return { workspaceId: record.workspaceId };
}
