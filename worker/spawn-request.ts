import { z } from 'zod';

/**
 * The spawn body (docs/contracts.md, docs/worker.md). Unknown fields are dropped, never stored:
 * the service must not send provider keys, and if it did they would not be kept.
 */
const text = (max: number) => z.string().trim().min(1).max(max);

export const SpawnRequest = z.object({
  sessionId: z.string().regex(/^inv_[A-Za-z0-9_-]{1,64}$/, 'must look like inv_<id>'),
  interviewId: z.string().regex(/^dpl_[A-Za-z0-9_-]{1,64}$/, 'must look like dpl_<id>'),
  metadata: z.record(z.string(), z.unknown()).optional().default({}),
  interview: z.object({
    title: z.string().max(200).optional().default(''),
    language: z.string().regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/, 'must be a language tag such as en or en-GB').optional().default('en'),
    intro: text(2000),
    questions: z
      .array(z.object({ id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/), text: text(1000), maxFollowUps: z.number().int().min(0).max(3).optional().default(1) }))
      .min(1)
      .max(50),
    closing: text(2000),
  }),
  expiresAt: z.iso.datetime({ offset: true }).optional(),
});

export type SpawnRequest = z.infer<typeof SpawnRequest>;

/** The first problem, named by its path, e.g. `interview.questions.0.text: Too small`. */
export function describeProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'The spawn body is invalid.';
  const path = issue.path.join('.') || 'body';
  return `${path}: ${issue.message}`;
}
