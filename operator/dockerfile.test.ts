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

  it('builds on node:24 slim, ships only node and the bundle on an empty base, as a non-root user in exec form', () => {
    const froms = instructions.filter((l) => l.startsWith('FROM '));
    expect(froms).toEqual(['FROM node:24-slim AS build', 'FROM scratch']);
    const final = text.slice(text.lastIndexOf('\nFROM '));
    // The final stage takes one prepared file system from the build stage, nothing else.
    expect(final.split('\n').filter((l) => /^(COPY|ADD|RUN) /.test(l))).toEqual(['COPY --from=build /rootfs/ /']);
    expect(text).toContain('RUN node scripts/bundle-operator.mjs dist/operator.mjs');
    const users = instructions.filter((l) => l.startsWith('USER '));
    expect(users.at(-1)).toMatch(/^USER 1000(:1000)?$/);
    expect(instructions.at(-1)).toBe('ENTRYPOINT ["/usr/local/bin/node", "/app/operator.mjs"]');
  });
});
