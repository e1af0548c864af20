/**
 * The server SDK: sessions (create, retrieve) and webhook verification.
 *
 *   import { ServiceClient, webhooks } from './sdk/server/index.ts';
 *   const client = new ServiceClient({ baseUrl, secretKey, publishableKey });
 *   const { sessionId, sessionUrl } = await client.sessions.create({ interviewId: 'dpl_…', metadata: { userId: 42 } });
 *   const session = await client.sessions.retrieve(sessionId);
 *   const event = webhooks.constructEvent(rawBody, req.headers['service-signature'], 'whsec_…');
 */
export { ServiceClient } from './client.ts';
export type { ServiceClientOptions, CreateSessionParams, CreatedSession, Session, RequestOptions } from './client.ts';
export {
  ServiceError,
  InvalidRequestError,
  AuthenticationError,
  PermissionError,
  NotFoundError,
  ConflictError,
  GoneError,
  RateLimitError,
  InternalServerError,
  ConnectionError,
  errorFromResponse,
} from './errors.ts';
export { webhooks, constructEvent, generateTestHeader, WebhookSignatureError, DEFAULT_TOLERANCE_SECONDS } from './webhooks.ts';
export type { WebhookEvent, WebhookErrorCode } from './webhooks.ts';
export { SIGNATURE_HEADER } from '../../lib/signature.ts';
