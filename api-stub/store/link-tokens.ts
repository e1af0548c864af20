import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Database } from '../db/database.ts';
import { stmt } from '../db/statements.ts';

/**
 * The session-scoped capability in sessionUrl (`…/s/<id>?from=sdk#k=<token>`): whoever holds the
 * link may connect that one session, with no publishable key (docs/respondent-page.md). It sits in
 * the fragment, which browsers never send to a server nor put in a Referer. 32 random bytes. The
 * session's `url` keeps the whole link (retrieval returns the same address, as the spec says); the
 * check compares SHA-256 digests in constant time against `link_token_sha256`.
 */
export const LINK_TOKEN_PARAM = 'k';

export function mintLinkToken(): string {
  return randomBytes(32).toString('base64url');
}

export const linkTokenDigest = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** The session's workspace and deployment when `token` is its link token; null otherwise (unknown session included). */
export function sessionForLinkToken(db: Database, sessionId: string, token: string): { workspaceId: string; deploymentId: string } | null {
  const row = stmt(db, 'SELECT workspace_id, deployment_id, link_token_sha256 FROM sessions WHERE id = ?').get(sessionId);
  const expected = Buffer.from(String(row?.link_token_sha256 ?? ''), 'hex');
  const given = Buffer.from(linkTokenDigest(token), 'hex');
  if (!row || expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  return { workspaceId: String(row.workspace_id), deploymentId: String(row.deployment_id) };
}
