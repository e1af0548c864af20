import { isoSeconds } from '../../lib/time.ts';
import type { SessionRecord } from '../store/sessions.ts';

/** Session (created), spec section 2. */
export interface CreatedSessionView {
  sessionId: string;
  sessionUrl: string;
  expiresAt: string;
}

/** Session (retrieved), spec section 2. Fields that do not apply yet are present and null. */
export interface RetrievedSessionView {
  id: string;
  interviewId: string;
  status: string;
  createdAt: string;
  clickedAt: string | null;
  completedAt: string | null;
  metadata: Record<string, unknown>;
  url: string;
  expiresAt: string;
  response: { id: string; status: string; transcriptKey: string; summary: string } | null;
}

const isoOrNull = (ms: number | null): string | null => (ms === null ? null : isoSeconds(ms));

export function createdView(s: SessionRecord): CreatedSessionView {
  return { sessionId: s.id, sessionUrl: s.url, expiresAt: isoSeconds(s.expiresAt) };
}

export function retrievedView(s: SessionRecord): RetrievedSessionView {
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
    response: s.response ? { id: s.response.id, status: s.response.status, transcriptKey: s.response.transcriptKey, summary: s.response.summary } : null,
  };
}
