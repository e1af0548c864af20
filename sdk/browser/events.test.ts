import { describe, expect, it } from 'vitest';
import { isHostCommand, isServiceEvent, normaliseOrigin, SERVICE_EVENTS } from './events.ts';

describe('browser SDK event shapes', () => {
  it('accepts each documented event with our source marker and a session id', () => {
    for (const type of SERVICE_EVENTS) expect(isServiceEvent({ source: 'service-respondent', type, sessionId: 'inv_1', at: 1 })).toBe(true);
  });

  it('refuses look-alikes: another source, an unknown type, no session id, non-objects', () => {
    expect(isServiceEvent({ source: 'other', type: 'service:ready', sessionId: 'inv_1' })).toBe(false);
    expect(isServiceEvent({ source: 'service-respondent', type: 'service:pwned', sessionId: 'inv_1' })).toBe(false);
    expect(isServiceEvent({ source: 'service-respondent', type: 'service:ready' })).toBe(false);
    expect(isServiceEvent('service:ready')).toBe(false);
    expect(isServiceEvent(null)).toBe(false);
  });

  it('knows the host commands', () => {
    expect(isHostCommand({ source: 'service-host', type: 'service:hangup' })).toBe(true);
    expect(isHostCommand({ source: 'service-host', type: 'service:eval' })).toBe(false);
  });

  it('normalises only plain http(s) origins', () => {
    expect(normaliseOrigin('https://app.example.com')).toBe('https://app.example.com');
    expect(normaliseOrigin('http://localhost:5173/')).toBe('http://localhost:5173');
    expect(normaliseOrigin('https://app.example.com/path')).toBeNull();
    expect(normaliseOrigin('javascript:alert(1)')).toBeNull();
    expect(normaliseOrigin('*')).toBeNull();
    expect(normaliseOrigin(null)).toBeNull();
  });
});
