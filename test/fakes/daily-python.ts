import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * The Python interpreter for the Daily bridge in tests: the project's own venv (scripts/python-env.sh,
 * created by scripts/bootstrap.sh; this call creates it when missing, and fails loudly if it cannot).
 * `fakeDailyEnv` points the bridge at the fake `daily` module and a fake room server.
 */
const ROOT = resolve(import.meta.dirname, '../..');
export const FAKE_DAILY_MODULE = resolve(ROOT, 'test/fakes/daily_module');

let cached: string | null = null;

export function dailyPython(): string {
  cached ??= execFileSync('bash', [resolve(ROOT, 'scripts/python-env.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 600_000,
  }).trim();
  return cached;
}

export function fakeDailyEnv(roomServerAddress: string): Record<string, string> {
  return { DAILY_BRIDGE_PYTHON: dailyPython(), PYTHONPATH: FAKE_DAILY_MODULE, FAKE_DAILY_ROOM: roomServerAddress };
}
