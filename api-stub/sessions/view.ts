import { isoSeconds } from '../../lib/time.ts';
import type { CreatedSession, Session } from '../../lib/api-types.ts';
import type { SessionRecord } from '../store/sessions.ts';

const isoOrNull = (ms: number | null): string | null => (ms === null ? null : isoSeconds(ms));

/** The wire shapes of spec section 2 (declared in lib/api-types.ts), built from a stored session. */
export function createdView(s: SessionRecord): CreatedSession {
  return { sessionId: s.id, sessionUrl: s.url, expiresAt: isoSeconds(s.expiresAt) };
}

export function retrievedView(s: SessionRecord): Session {
  return {
    id: s.id,
    interviewId: s.deploymentId,
    status: s.status,
    createdAt: isoSeconds(s.createdAt),
    clickedAt: isoOrNull(s.clickedAt),
    completedAt: isoOrNull(s.completedAt),
    metadata: s.metadata,
    url: s.url,
    expiresAt: isoSeconds(s.expiresAt),
    response: s.response
      ? { id: s.response.id, status: s.response.status, transcriptKey: s.response.transcriptKey, summary: s.response.summary }
      : null,
  };
}
