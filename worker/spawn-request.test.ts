import { describe, expect, it } from 'vitest';
import { parseStoredSpawn, SpawnRequest, storedSpawnJson } from './spawn-request.ts';

/**
 * The spawn as stored with the claim: written under the contract's names (records already in Redis
 * read the same), read back once, with the service's connect attempt as `serviceAttempt`.
 */
const interview = { title: 'T', language: 'en', intro: 'Hi.', questions: [{ id: 'q1', text: 'Why?', maxFollowUps: 1 }], closing: 'Bye.' };

describe('the stored spawn', () => {
  it('keeps the stored name attempt and reads it as the service attempt', () => {
    const body = SpawnRequest.parse({ sessionId: 'inv_1', interviewId: 'dpl_1', attempt: 3, interview, reportToken: 'r'.repeat(43) });
    const json = storedSpawnJson(body);
    expect(JSON.parse(json)).toMatchObject({ interviewId: 'dpl_1', attempt: 3, reportToken: 'r'.repeat(43) });
    expect(parseStoredSpawn(json)).toEqual({
      interviewId: 'dpl_1',
      serviceAttempt: 3,
      metadata: {},
      interview,
      expiresAt: null,
      reportToken: 'r'.repeat(43),
    });
  });

  it('reads a record written by an older release (no attempt) and refuses a damaged one', () => {
    expect(parseStoredSpawn(JSON.stringify({ interviewId: 'dpl_1', interview }))).toMatchObject({
      interviewId: 'dpl_1',
      serviceAttempt: undefined,
    });
    expect(parseStoredSpawn('{"interviewId": 1}')).toBeNull();
    expect(parseStoredSpawn('not json')).toBeNull();
  });
});
