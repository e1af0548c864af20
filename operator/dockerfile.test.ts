/**
 * Dockerfile.operator is written and linted here (no Docker engine on this machine): the
 * dockerfile-utils linter with every rule as an error, plus our image policy.
 */
import { readFileSync } from 'node:fs';
import { validate, ValidationSeverity, type ValidatorSettings } from 'dockerfile-utils';
import { describe, expect, it } from 'vitest';

const strict: ValidatorSettings = {
  deprecatedMaintainer: ValidationSeverity.ERROR,
  directiveCasing: ValidationSeverity.ERROR,
  emptyContinuationLine: ValidationSeverity.ERROR,
  instructionCasing: ValidationSeverity.ERROR,
  instructionCmdMultiple: ValidationSeverity.ERROR,
  instructionEntrypointMultiple: ValidationSeverity.ERROR,
  instructionHealthcheckMultiple: ValidationSeverity.ERROR,
  instructionJSONInSingleQuotes: ValidationSeverity.ERROR,
  instructionWorkdirRelative: ValidationSeverity.ERROR,
};

const text = readFileSync(new URL('../Dockerfile.operator', import.meta.url), 'utf8');
const instructions = text.split('\n').filter((l) => /^[A-Z]+\s/.test(l));

describe('Dockerfile.operator', () => {
  it('has no lint findings', () => {
    expect(validate(text, strict).map((d) => `${d.range.start.line + 1}: ${d.message}`)).toEqual([]);
  });

  it('the linter does find problems (so the clean result above means something)', () => {
    const broken = 'from node:24-slim\nENTRYPOINT ["a"]\nENTRYPOINT ["b"]\nWORKDIR app\n';
    expect(validate(broken, strict).length).toBeGreaterThanOrEqual(3);
  });

  it('builds on node:24 slim and runs as a non-root user in exec form', () => {
    const froms = instructions.filter((l) => l.startsWith('FROM '));
    expect(froms.every((l) => /^FROM node:24-slim(\s|$)/.test(l))).toBe(true);
    const users = instructions.filter((l) => l.startsWith('USER '));
    expect(users.at(-1)).toMatch(/^USER (1000(:1000)?|node)$/);
    expect(instructions.at(-1)).toBe('ENTRYPOINT ["node", "operator/main.ts"]');
    expect(text).toContain('npm ci --omit=dev');
  });
});
