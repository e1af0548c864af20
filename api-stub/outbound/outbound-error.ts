/**
 * Why an outbound call did not get an HTTP answer. Messages name the host, never a header or body,
 * so a token can never travel into a log line or an API error through them.
 */
export type OutboundFailure = 'invalid_url' | 'https_required' | 'egress_refused' | 'dns' | 'timeout' | 'refused' | 'tls' | 'network';

export class OutboundError extends Error {
  readonly kind: OutboundFailure;

  constructor(kind: OutboundFailure, message: string) {
    super(message);
    this.name = 'OutboundError';
    this.kind = kind;
  }

  /** The deadline's signal fired (AbortSignal.timeout gives a TimeoutError reason). */
  static fromAbort(signal: AbortSignal, what: string): OutboundError {
    const reason = signal.reason as { name?: string } | undefined;
    const timedOut = reason?.name === 'TimeoutError';
    return new OutboundError('timeout', timedOut ? `The deadline passed while ${what}.` : `The call was cancelled while ${what}.`);
  }
}

const TLS_CODE = /CERT|SSL|TLS|SIGNATURE|ALTNAME|ISSUER|VERIFY/i;

/** Maps a socket-level error to a failure kind and a message with the host only. */
export function classifySocketError(err: unknown, host: string): OutboundError {
  if (err instanceof OutboundError) return err;
  const code = (err as { code?: string }).code ?? '';
  if (code === 'ECONNREFUSED') return new OutboundError('refused', `The connection to ${host} was refused.`);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new OutboundError('dns', `The host ${host} could not be resolved.`);
  if (code === 'ETIMEDOUT' || code === 'ESOCKETTIMEDOUT') return new OutboundError('timeout', `The connection to ${host} timed out.`);
  if (TLS_CODE.test(code)) return new OutboundError('tls', `The TLS handshake with ${host} failed (${code}).`);
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH') {
    return new OutboundError('network', `The connection to ${host} failed (${code}).`);
  }
  return new OutboundError('network', `The call to ${host} failed${code ? ` (${code})` : ''}.`);
}
