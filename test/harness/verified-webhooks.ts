import { constructEvent, type WebhookEvent } from '../../sdk/server/index.ts';
import { waitFor } from './ports.ts';
import type { WebhookReceiver } from './webhook-receiver.ts';

/**
 * The deliveries of a webhook receiver, each verified exactly as a customer's server would: raw
 * body, `Service-Signature` header and the signing secret, through the server SDK's constructEvent.
 * Deliveries that fail verification are kept as `rejected` messages, so a test can say why.
 */
export interface VerifiedWebhook {
  event: WebhookEvent;
  receivedAt: number;
}

export interface VerifiedInbox {
  verified: VerifiedWebhook[];
  rejected: string[];
  /** Polls until a verified event of this type for this session arrived. */
  waitFor(type: string, sessionId: string, timeoutMs?: number): Promise<VerifiedWebhook>;
}

export function verifiedInbox(receiver: WebhookReceiver, secret: string): VerifiedInbox {
  const verified: VerifiedWebhook[] = [];
  const rejected: string[] = [];
  let checked = 0;
  const verifyNew = (): void => {
    for (; checked < receiver.received.length; checked++) {
      const hit = receiver.received[checked]!;
      try {
        verified.push({ event: constructEvent(hit.rawBody, hit.headers['service-signature'], secret), receivedAt: hit.receivedAt });
      } catch (err) {
        rejected.push((err as Error).message);
      }
    }
  };
  const find = (type: string, sessionId: string): VerifiedWebhook | undefined => {
    verifyNew();
    return verified.find((v) => v.event.type === type && (v.event.data as { sessionId?: string }).sessionId === sessionId);
  };
  return {
    verified,
    rejected,
    async waitFor(type, sessionId, timeoutMs = 20_000) {
      await waitFor(() => find(type, sessionId) !== undefined, {
        timeoutMs,
        intervalMs: 100,
        what: `a verified ${type} webhook for ${sessionId} (rejected: ${rejected.join('; ') || 'none'})`,
      });
      return find(type, sessionId)!;
    },
  };
}
