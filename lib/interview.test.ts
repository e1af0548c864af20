import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { INTERVIEW_LIMITS, InterviewSchema, StrictInterviewSchema } from './interview.ts';
import { parseSeed } from '../api-stub/seed.ts';
import { SpawnRequest } from '../worker/spawn-request.ts';

const widest = {
  title: 't'.repeat(INTERVIEW_LIMITS.titleChars),
  language: 'en-GB',
  intro: 'i'.repeat(INTERVIEW_LIMITS.introChars),
  questions: Array.from({ length: INTERVIEW_LIMITS.questions }, (_, n) => ({
    id: `q${n}`,
    text: 'q'.repeat(INTERVIEW_LIMITS.questionChars),
    maxFollowUps: INTERVIEW_LIMITS.maxFollowUps,
  })),
  closing: 'c'.repeat(INTERVIEW_LIMITS.closingChars),
};

describe('interview definition shared by the seed and the spawn body', () => {
  it('lets the worker accept every interview of the example seed, unchanged', () => {
    const seed = parseSeed(JSON.parse(readFileSync('examples/seed.json', 'utf8')));
    const interviews = seed.workspaces.flatMap((w) => w.deployments.map((d) => d.interview));
    expect(interviews.length).toBeGreaterThan(0);
    for (const interview of interviews) {
      const spawn = SpawnRequest.parse({ sessionId: 'inv_a', interviewId: 'dpl_b', interview });
      expect(spawn.interview).toEqual(interview);
    }
  });

  it('lets the worker accept an interview at every limit the service allows', () => {
    const stored = StrictInterviewSchema.parse(widest);
    expect(SpawnRequest.safeParse({ sessionId: 'inv_a', interviewId: 'dpl_b', interview: stored }).success).toBe(true);
  });

  it('refuses unknown fields in a seed but drops them in a spawn body', () => {
    const withExtra = { ...widest, rubric: 'x' };
    expect(StrictInterviewSchema.safeParse(withExtra).success).toBe(false);
    expect(InterviewSchema.parse(withExtra)).not.toHaveProperty('rubric');
  });

  it('refuses one past each limit on both sides', () => {
    const tooMany = { ...widest, questions: [...widest.questions, { id: 'extra', text: 'q', maxFollowUps: 0 }] };
    const tooManyFollowUps = { ...widest, questions: [{ id: 'q', text: 'q', maxFollowUps: INTERVIEW_LIMITS.maxFollowUps + 1 }] };
    for (const bad of [tooMany, tooManyFollowUps, { ...widest, intro: '   ' }]) {
      expect(StrictInterviewSchema.safeParse(bad).success).toBe(false);
      expect(InterviewSchema.safeParse(bad).success).toBe(false);
    }
  });
});
