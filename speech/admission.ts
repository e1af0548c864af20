import type { IncomingMessage } from 'node:http';
import { overloaded, SpeechError } from './errors.ts';
import type { Lane, SpeechMetrics } from './metrics.ts';
import type { SpeechService } from './service.ts';

/**
 * What a request may cost before its body is read (docs/speech.md, "Bounds"). A request the server
 * would refuse is refused on its headers: a full queue (503) or a body larger than the route takes
 * (413), and the bytes of the bodies being read or held at once are bounded, so that many large
 * uploads arriving together cannot take the memory that the models need.
 */
export const MAX_BODY_BYTES_IN_FLIGHT = 32 * 1024 * 1024;

export class BodyBudget {
  private held = 0;
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** Reserves `bytes` (the declared length, or the route's limit when none is declared); false when they do not fit. */
  take(bytes: number): boolean {
    if (this.held > 0 && this.held + bytes > this.limit) return false;
    this.held += bytes;
    return true;
  }

  release(bytes: number): void {
    this.held -= bytes;
  }
}

/** The body's declared length, or null when it is sent chunked. */
export function declaredLength(req: IncomingMessage): number | null {
  const declared = Number(req.headers['content-length']);
  return req.headers['content-length'] !== undefined && Number.isFinite(declared) ? declared : null;
}

/**
 * Admits a request of `client` to `lane` before its body is read, with at most `maxBody` bytes of
 * body: the bytes it reserves in the budget (release them when the request is done), or the error
 * to answer.
 */
export function admit(
  req: IncomingMessage,
  options: { service: SpeechService; metrics: SpeechMetrics; budget: BodyBudget; lane: Lane; client: string; maxBody: number },
): number {
  const declared = declaredLength(req);
  if (declared !== null && declared > options.maxBody) {
    throw new SpeechError(
      413,
      'payload_too_large',
      `The request body is larger than this server takes (${Math.floor(options.maxBody / 1024)} KiB).`,
    );
  }
  const what = options.lane === 'stt' ? 'speech-to-text' : 'text-to-speech';
  const bytes = declared ?? options.maxBody;
  if (!options.service.hasRoom(options.lane, options.client) || !options.budget.take(bytes)) {
    options.metrics.rejected.inc({ lane: options.lane });
    throw overloaded(what);
  }
  return bytes;
}
