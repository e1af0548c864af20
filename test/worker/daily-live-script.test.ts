import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeDaily, type FakeDaily } from '../fakes/daily-api.ts';
import { fakeDailyEnv } from '../fakes/daily-python.ts';
import { startFakeDailyRooms, type FakeDailyRooms } from '../fakes/daily-room.ts';

/**
 * The opt-in live Daily test (test/live/daily-live.ts) is code too: here it runs against the fakes
 * (REST API, fake SDK, fake media rooms) so that its own steps are known to work before anyone points
 * it at Daily. This is NOT the live test: scripts/test.sh says plainly when that did not run.
 */
let api: FakeDaily;
let rooms: FakeDailyRooms;

beforeAll(async () => {
  api = await startFakeDaily();
  rooms = await startFakeDailyRooms(api);
}, 600_000);

afterAll(async () => {
  await rooms?.close();
  await api?.close();
});

describe('the live Daily script, against the fakes', () => {
  it('makes a room, joins the bot and a respondent bridge, checks messages and audio both ways, cleans up', async () => {
    const env = { ...process.env, ...fakeDailyEnv(rooms.address), DAILY_API_KEY: api.apiKey, DAILY_API_URL: api.url, LOG_LEVEL: 'error' };
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
      execFile(process.execPath, [resolve(import.meta.dirname, '../live/daily-live.ts')], { env, timeout: 60_000 }, (err, stdout, stderr) =>
        done({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/daily live test: passed \(room \S+; [1-9]\d* bytes bot -> respondent, [1-9]\d* bytes respondent -> bot\)/);
    expect(rooms.joins.filter((j) => j.ok).map((j) => j.owner)).toEqual([true, false]);
    expect(api.rooms.size).toBe(0); // the room was deleted
  }, 90_000);
});
