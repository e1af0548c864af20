import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ProviderError, type FailureKind, type ProviderKind } from '../worker/providers/errors.ts';
import { FAILURE_REASON_MEANINGS, FAILURE_REASONS, FailureReason, isFailureReason, PROVIDER_FAILURE_REASONS } from './failure-reasons.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The codes of the table under "## Failure reasons" in docs/webhooks.md. */
function documentedReasons(): Map<string, string> {
  const doc = readFileSync(join(ROOT, 'docs/webhooks.md'), 'utf8');
  const start = doc.indexOf('\n## Failure reasons\n');
  expect(start, 'docs/webhooks.md has a "## Failure reasons" section').toBeGreaterThan(-1);
  const section = doc.slice(start + 1).split(/\n## /)[0]!;
  const rows = new Map<string, string>();
  for (const match of section.matchAll(/^\| `([a-z0-9_]+)` \| (.+) \|$/gm)) rows.set(match[1]!, match[2]!);
  return rows;
}

function workerSources(dir = join(ROOT, 'worker')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return workerSources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('the failure-reason catalogue', () => {
  it('gives every reason a one-line meaning', () => {
    expect(FAILURE_REASONS.length).toBeGreaterThan(10);
    for (const reason of FAILURE_REASONS) {
      expect(reason).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(FailureReason[reason]).toBe(reason);
      expect(FAILURE_REASON_MEANINGS[reason]).toMatch(/^[^\n]{10,200}$/);
    }
    expect(isFailureReason('llm_timeout')).toBe(true);
    expect(isFailureReason('toString')).toBe(false);
    expect(isFailureReason('made_up')).toBe(false);
  });

  it('is documented in docs/webhooks.md, exactly', () => {
    const documented = documentedReasons();
    expect([...documented.keys()].sort()).toEqual([...FAILURE_REASONS].sort());
  });

  it('covers every reason a provider failure can become', () => {
    const providers: ProviderKind[] = ['stt', 'llm', 'tts'];
    const kinds: FailureKind[] = ['timeout', 'http', 'network', 'bad_response', 'aborted', 'unavailable'];
    for (const provider of providers) {
      for (const kind of kinds)
        expect(isFailureReason(new ProviderError(provider, kind, false, 'm').reason), `${provider}/${kind}`).toBe(true);
      for (const reason of Object.values(PROVIDER_FAILURE_REASONS[provider])) expect(isFailureReason(reason)).toBe(true);
    }
  });

  // The worker's failed outcomes are built in a few known shapes; each must name its reason from
  // the catalogue, never as a free string, so that nothing outside it can reach interview.failed.
  it('is the only source of the reasons the worker reports', () => {
    const freeStrings = [
      /new SessionEnd\(\s*['"`]/, // a session ended with a literal reason
      /status: 'failed',\s*reason: ['"`]/, // an outcome object with a literal reason
      /interruptAll\(\s*['"`]/, // the stop reason becomes the failure reason
      /stop\.reason \?\? ['"`]/,
    ];
    const offenders: string[] = [];
    let uses = 0;
    for (const file of workerSources()) {
      const text = readFileSync(file, 'utf8');
      text.split('\n').forEach((line, i) => {
        if (freeStrings.some((re) => re.test(line))) offenders.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
      });
      for (const match of text.matchAll(/FailureReason\.([A-Za-z0-9_]+)/g)) {
        uses += 1;
        expect(isFailureReason(match[1]), `${relative(ROOT, file)} uses FailureReason.${match[1]}`).toBe(true);
      }
    }
    expect(offenders).toEqual([]);
    // The scan saw the worker's reasons: the swap to constants is in place (a guard against a moved tree).
    expect(uses).toBeGreaterThanOrEqual(15);
  });
});
