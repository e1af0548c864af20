import type { RequestHandler } from 'express';
import type { z } from 'zod';
import { HttpError } from '../lib/errors.ts';
import { jsonBody } from '../lib/http.ts';
import type { ApiStubConfig } from './config.ts';

/** The JSON body parser of every api-stub route: oversized or malformed bodies are 400 invalid_request. */
export function apiJsonBody(config: Pick<ApiStubConfig, 'bodyLimitBytes'>): RequestHandler {
  return jsonBody({ limit: `${config.bodyLimitBytes}b`, tooLargeCode: 'invalid_request' });
}

/** The first problem of a failed parse, as a message naming the field: `metadata: expected an object`. */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'The request body is invalid.';
  const field = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.join(', ');
    return `${field ? `${field}: ` : ''}unknown field${issue.keys.length > 1 ? 's' : ''} ${keys}.`;
  }
  return field ? `${field}: ${issue.message}.` : `${issue.message}.`;
}

/** Parses `input` with `schema` or throws 400 invalid_request naming the field. */
export function parseBody<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  if (input === undefined || input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new HttpError('invalid_request', 'The request body must be a JSON object.');
  }
  const result = schema.safeParse(input);
  if (!result.success) throw new HttpError('invalid_request', describeIssue(result.error));
  return result.data;
}
