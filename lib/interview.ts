import { z } from 'zod';

/**
 * The interview definition: what a deployment holds and what the service sends the worker in the
 * spawn body (docs/contracts.md). One schema for both sides, so that everything the service accepts
 * in a seed the worker also accepts. The seed is strict (an unknown field is a typo to report); the
 * worker is lenient (a newer service may add fields an older worker does not know yet).
 */
export const INTERVIEW_LIMITS = Object.freeze({
  titleChars: 200,
  introChars: 4000,
  questionChars: 2000,
  closingChars: 4000,
  questions: 50,
  maxFollowUps: 5,
});

const text = (max: number) => z.string().trim().min(1).max(max);
const questionFields = {
  id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -'),
  text: text(INTERVIEW_LIMITS.questionChars),
  maxFollowUps: z.number().int().min(0).max(INTERVIEW_LIMITS.maxFollowUps).default(1),
};
const interviewFields = (question: z.ZodType<InterviewQuestion, unknown>) => ({
  title: z.string().max(INTERVIEW_LIMITS.titleChars).default(''),
  language: z
    .string()
    .regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'must be a language tag such as en or en-GB')
    .default('en'),
  intro: text(INTERVIEW_LIMITS.introChars),
  questions: z.array(question).min(1).max(INTERVIEW_LIMITS.questions),
  closing: text(INTERVIEW_LIMITS.closingChars),
});

export interface InterviewQuestion {
  id: string;
  text: string;
  maxFollowUps: number;
}

export interface InterviewDefinition {
  title: string;
  language: string;
  intro: string;
  questions: InterviewQuestion[];
  closing: string;
}

/** For input we own (the seed file): unknown fields are refused. */
export const StrictInterviewSchema = z.strictObject(interviewFields(z.strictObject(questionFields)));
/** For input from a peer (the spawn body): unknown fields are dropped. */
export const InterviewSchema = z.object(interviewFields(z.object(questionFields)));
