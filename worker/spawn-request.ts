import { z } from 'zod';
import { InterviewSchema } from '../lib/interview.ts';
import { metadataSchema } from '../lib/json-metadata.ts';

/**
 * The spawn body (docs/contracts.md, docs/worker.md). Unknown fields are dropped, never stored:
 * the service must not send provider keys, and if it did they would not be kept.
 */
export const SpawnRequest = z.object({
  sessionId: z.string().regex(/^inv_[A-Za-z0-9_-]{1,64}$/, 'must look like inv_<id>'),
  interviewId: z.string().regex(/^dpl_[A-Za-z0-9_-]{1,64}$/, 'must look like dpl_<id>'),
  // The service's connect attempt (from 0; contract field `attempt`): echoed in the outcome report so
  // a late report of an earlier attempt is told apart. In worker code it is `serviceAttempt`, never
  // to be mixed up with the Redis record's claim number (pool.ts, `claimNumber`, from 1).
  attempt: z.number().int().min(0).max(1_000_000).default(0),
  // Bounded in depth here, before anything walks it (a 5,000-deep value overflowed the stack further
  // on), and kept as sent: the shared schema never rebuilds the object, so `__proto__` keys survive.
  metadata: metadataSchema().optional().default({}),
  interview: InterviewSchema,
  expiresAt: z.iso.datetime({ offset: true }).optional(),
  // Contract C1: the credential of this session's outcome report (absent from older services).
  reportToken: z
    .string()
    .regex(/^[A-Za-z0-9_.~+/=-]{16,512}$/, 'must be a token of 16 to 512 URL-safe characters')
    .optional(),
});

export type SpawnRequest = z.infer<typeof SpawnRequest>;

/** The first problem, named by its path, e.g. `interview.questions.0.text: Too small`. */
export function describeProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'The spawn body is invalid.';
  const path = issue.path.join('.') || 'body';
  return `${path}: ${issue.message}`;
}

/**
 * The spawn as kept in the session record in Redis, read back (once, with the record: pool.ts) when
 * the session starts and when its outcome is reported. Read from Redis, so checked again: a record
 * written by an older release, or damaged, is refused rather than trusted. The stored JSON keeps
 * the contract's name `attempt` (records already stored read the same); the worker reads it as
 * `serviceAttempt`.
 */
export const StoredSpawn = z
  .object({
    interviewId: z.string(),
    attempt: z.number().int().optional(),
    metadata: metadataSchema().optional(),
    interview: InterviewSchema,
    expiresAt: z.string().nullable().optional(),
    reportToken: z.string().optional(),
  })
  .transform(({ attempt, ...fields }) => ({ ...fields, serviceAttempt: attempt }));
export type StoredSpawn = z.output<typeof StoredSpawn>;

/** The JSON stored with the claim: what the session and its report need, under the stored names. */
export function storedSpawnJson(body: SpawnRequest): string {
  return JSON.stringify({
    interviewId: body.interviewId,
    attempt: body.attempt,
    metadata: body.metadata,
    interview: body.interview,
    expiresAt: body.expiresAt ?? null,
    reportToken: body.reportToken,
  });
}

export function parseStoredSpawn(json: string): StoredSpawn | null {
  try {
    const parsed = StoredSpawn.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
