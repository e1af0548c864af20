import autocannon from 'autocannon';
import Stripe from 'stripe';
import { constructEvent, generateTestHeader } from '../sdk/server/webhooks.ts';
import { fmt, machineLine, median, opsPerSecond, printTable, startServerProcess } from './support.ts';

/**
 * Session creation over HTTP (the api-stub with SQLite vs a bare Express handler), and webhook
 * verification (our constructEvent vs the stripe package's verifier), on this machine, in one run.
 * Aims: creation >= 0.5x the bare baseline's throughput; verification >= 1x the peer.
 */
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const ROUNDS = 3;
const VERIFY_ROUNDS = 25;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);

interface HttpResult {
  name: string;
  rps: number;
  /** Server process CPU time (user + system) per request, in microseconds. */
  cpuUsPerReq: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

async function cpuMicros(port: number): Promise<number> {
  const usage = (await (await fetch(`http://127.0.0.1:${port}/__cpu`)).json()) as { user: number; system: number };
  return usage.user + usage.system;
}

async function load(name: string, port: number, durationS: number): Promise<HttpResult> {
  const cpuBefore = await cpuMicros(port);
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/api/v2/sdk/sessions`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      publishableKey: 'pk_test_demo0000000000000000',
      interviewId: 'dpl_onboarding',
      metadata: { userId: 'u-123', plan: 'pro' },
    }),
    connections: CONNECTIONS,
    duration: durationS,
  });
  const cpu = (await cpuMicros(port)) - cpuBefore;
  return {
    name,
    rps: result.requests.average,
    cpuUsPerReq: cpu / Math.max(1, result.requests.total),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/**
 * Both servers run at once (idle when not loaded) and are loaded in alternating rounds, so that
 * noise from other work on the machine falls on both alike; each figure is the median round.
 */
async function benchHttp(): Promise<{ results: HttpResult[]; pairedRatio: number }> {
  const servers = [
    {
      name: 'bare Express handler (baseline)',
      server: await startServerProcess('bench/servers/bare-express-server.ts'),
      rounds: [] as HttpResult[],
    },
    {
      name: 'api-stub POST /sessions (SQLite)',
      server: await startServerProcess('bench/servers/api-stub-server.ts'),
      rounds: [] as HttpResult[],
    },
  ];
  for (const s of servers) await load(s.name, s.server.port, 2); // warm-up: JIT, SQLite page cache
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of servers) s.rounds.push(await load(s.name, s.server.port, DURATION_S));
  }
  for (const s of servers) {
    const tail = await s.server.stop();
    if (tail) console.log(`  ${s.name}: ${tail}`);
  }
  const results = servers.map((s) => {
    const mid = s.rounds.find((r) => r.rps === median(s.rounds.map((x) => x.rps)))!;
    return { ...mid, non2xx: s.rounds.reduce((n, r) => n + r.non2xx, 0), errors: s.rounds.reduce((n, r) => n + r.errors, 0) };
  });
  // Each round of the api-stub against the baseline round just before it.
  const pairedRatio = median(servers[1]!.rounds.map((r, i) => r.rps / servers[0]!.rounds[i]!.rps));
  return { results, pairedRatio };
}

interface VerifyResult {
  peer: number;
  ours: number;
  /** Median over rounds of ours/peer measured back to back: robust to load that comes and goes. */
  pairedRatio: number;
}

function benchVerify(): VerifyResult {
  const secret = 'whsec_bench_secret_0123456789abcdef';
  const payload = JSON.stringify({
    id: 'evt_bench000000000000000',
    type: 'interview.completed',
    created: Math.floor(Date.now() / 1000),
    data: {
      sessionId: 'inv_bench000000000000000',
      interviewId: 'dpl_onboarding',
      metadata: { userId: 'u-123', plan: 'pro' },
      completedAt: new Date().toISOString(),
    },
  });
  const header = generateTestHeader({ payload, secret });
  const stripe = new Stripe('sk_test_bench_unused');
  const ours = () => void constructEvent(payload, header, secret);
  const theirs = () => void stripe.webhooks.constructEvent(payload, header, secret);
  // Both must accept the same input, or the comparison means nothing.
  ours();
  theirs();
  const rounds = { ours: [] as number[], theirs: [] as number[], ratio: [] as number[] };
  for (let r = 0; r < VERIFY_ROUNDS; r++) {
    const t = opsPerSecond(theirs, 200);
    const o = opsPerSecond(ours, 200);
    rounds.theirs.push(t);
    rounds.ours.push(o);
    rounds.ratio.push(o / t);
  }
  return { peer: median(rounds.theirs), ours: median(rounds.ours), pairedRatio: median(rounds.ratio) };
}

async function main(): Promise<void> {
  console.log(machineLine());
  console.log(
    `http: autocannon, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION_S} s per server ` +
      `after a 2 s warm-up (median round shown); servers in child processes`,
  );
  console.log(
    `verification: ${VERIFY_ROUNDS} back-to-back pairs of 200 ms rounds in this process (medians shown), a 450-byte interview.completed event\n`,
  );

  const { results: http, pairedRatio: httpRatio } = await benchHttp();
  const [bare, stub] = http as [HttpResult, HttpResult];
  printTable(
    ['session creation', 'req/s', 'p50 ms', 'p99 ms', 'server CPU µs/req', 'non-2xx', 'errors'],
    http.map((r) => [r.name, fmt(r.rps), r.p50, r.p99, fmt(r.cpuUsPerReq), r.non2xx, r.errors]),
  );
  console.log(
    `\napi-stub / baseline throughput, median of the ${ROUNDS} back-to-back rounds: ${fmt(httpRatio, 2)}x (aim >= ` +
      `0.50x): ${httpRatio >= 0.5 ? 'met' : 'NOT met'}`,
  );
  // CPU per request does not depend on how fast the load generator keeps up on a shared machine.
  console.log(`baseline / api-stub server CPU per request: ${fmt(bare.cpuUsPerReq / stub.cpuUsPerReq, 2)}x\n`);

  const verify = benchVerify();
  printTable(
    ['webhook verification', 'verifications/s'],
    [
      ['stripe webhooks.constructEvent (peer)', fmt(verify.peer)],
      ['our webhooks.constructEvent', fmt(verify.ours)],
    ],
  );
  console.log(
    `\nours / stripe, median of ${VERIFY_ROUNDS} back-to-back pairs: ${fmt(verify.pairedRatio, 2)}x (aim >= ` +
      `1.00x): ${verify.pairedRatio >= 1 ? 'met' : 'NOT met'}`,
  );
  if (stub.non2xx > 0 || stub.errors > 0) {
    console.log('api-stub answered non-2xx or failed requests during the run: the creation numbers are not valid');
    process.exitCode = 1;
  }
}

await main();
