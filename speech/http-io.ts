import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SpeechError } from './errors.ts';

/** Small I/O helpers of the public port: bounded bodies, bearer checks, error answers. */

/** The body, or a 413 as soon as it grows past `limit` (the rest is not read). */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  // A declared length is read into one buffer of that size: no second copy when the chunks are joined.
  if (Number.isInteger(declared) && declared >= 0 && req.headers['content-length'] !== undefined) {
    const body = Buffer.allocUnsafe(declared);
    let size = 0;
    for await (const chunk of req) {
      const bytes = chunk as Buffer;
      if (size + bytes.length > declared) throw tooLarge(limit);
      bytes.copy(body, size);
      size += bytes.length;
    }
    return body.subarray(0, size);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, size);
}

const tooLarge = (limit: number) =>
  new SpeechError(413, 'payload_too_large', `The request body is larger than this server takes (${Math.floor(limit / 1024)} KiB).`);

const digest = (value: string) => createHash('sha256').update(value).digest();

/** A constant-time check of `Authorization: Bearer <token>`. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match !== null && timingSafeEqual(digest(match[1]!), digest(token));
}

export const unauthorized = () =>
  new SpeechError(401, 'invalid_api_key', 'Missing or incorrect bearer token (Authorization: Bearer <SPEECH_TOKEN>).');

export function sendError(res: ServerResponse, err: SpeechError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify(err.toBody());
  res.writeHead(err.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...err.headers });
  res.end(body);
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
