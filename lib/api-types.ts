/**
 * The session wire types of the service's API (spec section 2), declared once: the api-stub
 * builds them (api-stub/sessions/view.ts) and the SDKs return them (sdk/server, sdk/browser).
 * Types only, so importing this file adds nothing to a bundle.
 */

/** Session statuses in the order they progress (spec section 3). */
export type SessionStatus = 'PENDING' | 'SENT' | 'CLICKED' | 'STARTED' | 'COMPLETED' | 'EXPIRED';

/** Session (created): the body of a 201 from session creation. */
export interface CreatedSession {
  sessionId: string;
  sessionUrl: string;
  expiresAt: string;
}

/** Response, nested in a retrieved session. `COMPLETED` is the only status the spec shows. */
export interface SessionResponse {
  id: string;
  status: string;
  transcriptKey: string;
  summary: string;
}

/** Session (retrieved). `clickedAt`, `completedAt` and `response` are present and null until they apply. */
export interface Session {
  id: string;
  interviewId: string;
  status: SessionStatus;
  createdAt: string;
  clickedAt: string | null;
  completedAt: string | null;
  metadata: Record<string, unknown>;
  url: string;
  expiresAt: string;
  response: SessionResponse | null;
}
