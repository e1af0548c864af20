import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../api-stub/app.ts';
import { loadConfig } from '../../api-stub/config.ts';
import { openDatabase } from '../../api-stub/db/database.ts';
import { applySeed, loadSeedFile } from '../../api-stub/seed.ts';
import { silentLogger } from '../../lib/log.ts';
import { systemClock } from '../../lib/time.ts';

/**
 * The api-stub as benchmarked: the real app over a real SQLite file (WAL), seeded with
 * examples/seed.json, with caps high enough not to refuse. Prints `{"port": N}` once listening.
 */
const dir = mkdtempSync(join(tmpdir(), 'api-stub-bench-'));
const config = loadConfig({
  PORT: '0',
  API_STUB_DB: join(dir, 'bench.sqlite'),
  RATE_CAP_HOURLY: '1000000000',
  RATE_CAP_PER_SECOND: '1000000000',
});
const db = openDatabase(config.dbPath);
applySeed(db, loadSeedFile(new URL('../../examples/seed.json', import.meta.url).pathname), Date.now());
const app = createApp(config, { db, clock: systemClock, log: silentLogger });
// The bench reads this process's CPU time per round; everything else goes to the real app.
const server = createServer((req, res) => {
  if (req.url === '/__cpu') return void res.end(JSON.stringify(process.cpuUsage()));
  app(req, res);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.on('SIGTERM', () =>
  server.close(() => {
    const sessions = db.prepare('SELECT COUNT(*) AS n FROM sessions').get()!.n;
    process.stderr.write(`${JSON.stringify({ sessionsStored: Number(sessions) })}\n`);
    db.close();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }),
);
