/**
 * The chart's alerts with Prometheus's own promtool: the rules parse and pass its checks, and each
 * alert has unit tests (test/operator/alerts/alerts.promtool.yaml) in which it fires and in which it
 * stays silent, on the series the worker and the operator really write.
 */
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { REPO_ROOT } from '../../harness/kube-binaries.ts';
import { helm, WITH_REGISTRY } from '../helpers.ts';
import { CHART } from './renders.ts';
import { runTool, said, validators, type Validators } from './tools.ts';

const TESTS = join(REPO_ROOT, 'test/operator/alerts/alerts.promtool.yaml');

interface RuleGroup {
  name: string;
  rules: Array<{ alert?: string; expr: string }>;
}
interface PromtoolTests {
  tests: Array<{ name: string; alert_rule_test?: Array<{ alertname: string; exp_alerts: unknown[] }> }>;
}

let v: Validators;
let dir: string;
let groups: RuleGroup[];

beforeAll(async () => {
  v = validators();
  // Release "vo" in namespace "ops", as the unit tests' series assume.
  const rendered = await helm([
    'template',
    'vo',
    CHART,
    ...WITH_REGISTRY,
    '--namespace',
    'ops',
    '--set',
    'prometheusRule.enabled=true',
    '--show-only',
    'templates/prometheusrule.yaml',
  ]);
  groups = (parse(rendered) as { spec: { groups: RuleGroup[] } }).spec.groups;
  dir = mkdtempSync(join(tmpdir(), 'voice-alerts-'));
  writeFileSync(join(dir, 'rules.yaml'), stringify({ groups }));
  copyFileSync(TESTS, join(dir, 'alerts.promtool.yaml'));
});

describe('PrometheusRule alerts', () => {
  it('pass promtool check rules', async () => {
    const r = await runTool(v.promtool, ['check', 'rules', join(dir, 'rules.yaml')]);
    expect(r.code, said('promtool check rules', r)).toBe(0);
    expect(r.stdout).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('pass their promtool unit tests', async () => {
    const r = await runTool(v.promtool, ['test', 'rules', join(dir, 'alerts.promtool.yaml')]);
    expect(r.code, said('promtool test rules', r)).toBe(0);
  });

  it('each have a unit test where they fire and one where they stay silent', () => {
    const tests = (parse(readFileSync(TESTS, 'utf8')) as PromtoolTests).tests.flatMap((t) => t.alert_rule_test ?? []);
    const alerts = groups.flatMap((g) => g.rules.map((r) => r.alert).filter((a): a is string => Boolean(a)));
    expect(alerts).toEqual(expect.arrayContaining(['VoiceOperatorDown', 'VoiceOperatorNoLeader', 'VoiceOutcomeReportBacklog']));
    for (const alert of alerts) {
      const mine = tests.filter((t) => t.alertname === alert);
      expect(
        mine.some((t) => t.exp_alerts.length > 0),
        `${alert} fires in some test`,
      ).toBe(true);
      expect(
        mine.some((t) => t.exp_alerts.length === 0),
        `${alert} stays silent in some test`,
      ).toBe(true);
    }
  });

  it('a test that expects the wrong outcome fails (promtool really evaluates)', async () => {
    const wrong = parse(readFileSync(TESTS, 'utf8')) as PromtoolTests;
    const firing = wrong.tests.find((t) => t.alert_rule_test?.some((a) => a.exp_alerts.length > 0))!;
    for (const a of firing.alert_rule_test!) a.exp_alerts = [];
    wrong.tests = [firing];
    writeFileSync(join(dir, 'wrong.promtool.yaml'), stringify(wrong));
    const r = await runTool(v.promtool, ['test', 'rules', join(dir, 'wrong.promtool.yaml')]);
    expect(r.code).not.toBe(0);
  });

  it('match only label values the worker writes', () => {
    // Every result the outbox and the direct report path count (worker/outbox.ts, worker/report.ts).
    const source = ['worker/outbox.ts', 'worker/report.ts'].map((f) => readFileSync(join(REPO_ROOT, f), 'utf8')).join('\n');
    const written = new Set(
      [...source.matchAll(/reports\.inc\(\{ result: ([^}]+)\}/g)].flatMap((m) => [...m[1]!.matchAll(/'([a-z_]+)'/g)].map((x) => x[1]!)),
    );
    expect(written.size).toBeGreaterThan(1);
    for (const rule of groups.flatMap((g) => g.rules)) {
      for (const m of rule.expr.matchAll(/worker_outcome_reports_total\{[^}]*result=~?"([^"]+)"/g)) {
        for (const value of m[1]!.split('|')) expect(written, `${rule.alert}: result="${value}"`).toContain(value);
      }
    }
  });
});
