import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DAILY_SESSIONS_PER_BOT } from '../lib/daily-sessions.ts';
import { ConfigError, loadConfig } from '../worker/config.ts';
import { defaultSessionsPerReplica } from './capacity.ts';

/**
 * "A Daily bot holds one session" is one constant; the worker and the operator import it, and the
 * CRD's CEL rule (which cannot) is read here and must name the same number.
 */
const crd = parse(readFileSync(new URL('../crds/voice.service.io_voiceworkerpools.yaml', import.meta.url), 'utf8')) as {
  spec: {
    versions: Array<{
      schema: { openAPIV3Schema: { properties: { spec: { 'x-kubernetes-validations': Array<{ rule: string; message: string }> } } } };
    }>;
  };
};

describe('one session per Daily bot', () => {
  it("is the CRD's CEL rule on BOT_SESSIONS_PER_PROCESS, for every served version", () => {
    for (const version of crd.spec.versions) {
      const rules = version.schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'];
      const daily = rules.filter((r) => r.rule.includes("self.roomProvider != 'daily'") && r.rule.includes('BOT_SESSIONS_PER_PROCESS'));
      expect(daily).toHaveLength(1);
      const allowed = /e\.value != '(\d+)'/.exec(daily[0]!.rule)?.[1];
      expect(allowed).toBe(String(DAILY_SESSIONS_PER_BOT));
      expect(daily[0]!.message).toContain(`must be ${DAILY_SESSIONS_PER_BOT} or unset`);
    }
  });

  it("is the worker's limit and the operator's default for Daily pools", () => {
    const daily = {
      WORKER_TOKEN: 'a-long-enough-worker-token',
      BACKEND_URL: 'https://app.example.com',
      OPENAI_API_KEY: 'sk-test',
      ROOM_PROVIDER: 'daily',
      DAILY_API_KEY: 'k',
    };
    expect(loadConfig({ ...daily, BOT_SESSIONS_PER_PROCESS: String(DAILY_SESSIONS_PER_BOT) }).botSessionsPerProcess).toBe(
      DAILY_SESSIONS_PER_BOT,
    );
    expect(() => loadConfig({ ...daily, BOT_SESSIONS_PER_PROCESS: String(DAILY_SESSIONS_PER_BOT + 1) })).toThrow(ConfigError);
    expect(defaultSessionsPerReplica({ roomProvider: 'daily', resources: { requests: { cpu: '8', memory: '64Gi' } } })).toBe(
      DAILY_SESSIONS_PER_BOT,
    );
  });
});
