import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './kube-binaries.ts';
import { freePort, waitFor } from './ports.ts';

/**
 * A real livekit-server on loopback for the ROOM_PROVIDER=livekit tests, the demo and the bench:
 * single node (no Redis), its own keys, free ports, node_ip 127.0.0.1, no external IP, no STUN.
 * The binary comes from scripts/livekit-server.sh (built from the Go module proxy on first use);
 * a missing Go toolchain is a loud error, never a skip.
 */
export interface LiveKitServer {
  /** ws://127.0.0.1:<port>: LIVEKIT_URL for the worker, room_url for respondents. */
  url: string;
  apiKey: string;
  apiSecret: string;
  /** LIVEKIT_URL, LIVEKIT_API_KEY, LIVEKIT_API_SECRET and ROOM_PROVIDER=livekit. */
  env: Record<string, string>;
  output(): string;
  stop(): Promise<void>;
}

/** Builds the binary if missing (the script takes a lock) and returns its path. */
export function liveKitServerBinary(): string {
  const script = join(REPO_ROOT, 'scripts/livekit-server.sh');
  const path = execFileSync('bash', [script, '--bin-path'], { encoding: 'utf8' }).trim();
  if (existsSync(path)) return path;
  const built = spawnSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 900_000 });
  if (built.status !== 0 || !existsSync(path))
    throw new Error(`livekit-server is missing at ${path} and "bash scripts/livekit-server.sh" failed (status ${built.status})`);
  return path;
}

/**
 * libwebrtc gathers no candidates from `lo`: a machine with loopback only needs one more
 * interface. Here that is a veth pair whose peer lives in a network namespace of our own, so
 * nothing outside this test sees it. Returns a clean-up, or null when an interface already exists.
 */
export function ensureNonLoopbackInterface(log: (line: string) => void = (l) => console.warn(l)): (() => void) | null {
  const present = Object.values(networkInterfaces())
    .flat()
    .some((i) => i && !i.internal && i.family === 'IPv4');
  if (present) return null;
  const tag = `${process.pid % 100_000}`;
  const ns = `voice-lk-${tag}`;
  const host = `vlk${tag}`;
  const run = (...args: string[]): void => {
    const r = spawnSync('ip', args, { encoding: 'utf8' });
    if (r.status !== 0)
      throw new Error(`ip ${args.join(' ')} failed: ${r.stderr.trim()} (WebRTC needs one non-loopback interface; run as root or add one)`);
  };
  log(
    `livekit: no non-loopback interface here; creating veth ${host} (10.77.0.1/30) with its peer in network namespace ${ns}, because WebRTC ignores loopback`,
  );
  run('netns', 'add', ns);
  run('link', 'add', host, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns);
  run('addr', 'add', '10.77.0.1/30', 'dev', host);
  run('link', 'set', host, 'up');
  run('-n', ns, 'link', 'set', 'eth0', 'up');
  return () => {
    spawnSync('ip', ['link', 'del', host]);
    spawnSync('ip', ['netns', 'del', ns]);
  };
}

/**
 * A livekit-server config in a temp dir: single node without Redis, the API and WebRTC ports on one
 * address, that address as the only ICE candidate range, no external IP, no STUN, keys of the test's own.
 */
export function writeLiveKitConfig(o: {
  port: number;
  tcpPort: number;
  udpPort: number;
  apiKey: string;
  apiSecret: string;
  address: string;
  candidates: string;
  loopbackCandidate?: boolean;
  logLevel?: string;
}): { dir: string; configFile: string } {
  const dir = mkdtempSync(join(tmpdir(), 'livekit-'));
  const configFile = join(dir, 'livekit.yaml');
  writeFileSync(
    configFile,
    [
      `port: ${o.port}`,
      `bind_addresses: [${o.address}]`,
      'rtc:',
      `  tcp_port: ${o.tcpPort}`,
      `  udp_port: ${o.udpPort}`,
      '  use_external_ip: false',
      `  node_ip: ${o.address}`,
      ...(o.loopbackCandidate ? ['  enable_loopback_candidate: true'] : []),
      `  ips: { includes: [${o.candidates}] }`,
      '  stun_servers: []',
      'keys:',
      `  ${o.apiKey}: ${o.apiSecret}`,
      `logging: { level: ${o.logLevel ?? 'warn'} }`,
    ].join('\n'),
  );
  return { dir, configFile };
}

export async function startLiveKitServer(options: { logLevel?: string } = {}): Promise<LiveKitServer> {
  const binary = liveKitServerBinary();
  const cleanupInterface = ensureNonLoopbackInterface();
  const [port, tcpPort, udpPort] = [await freePort(), await freePort(), await freePort()];
  const apiKey = `APItest${randomBytes(4).toString('hex')}`;
  const apiSecret = randomBytes(32).toString('base64url');
  const { dir, configFile } = writeLiveKitConfig({
    port,
    tcpPort,
    udpPort,
    apiKey,
    apiSecret,
    address: '127.0.0.1',
    candidates: '127.0.0.1/8',
    loopbackCandidate: true,
    logLevel: options.logLevel,
  });
  const chunks: string[] = [];
  const child: ChildProcess = spawn(binary, ['--config', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => chunks.push(d.toString()));
  child.stderr!.on('data', (d: Buffer) => chunks.push(d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const output = (): string => chunks.join('').slice(-4000);
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      // SIGTERM waits for participants to leave; the tests are done with the rooms by now.
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
    cleanupInterface?.();
  };
  try {
    let gone = false;
    void exited.then(() => (gone = true));
    await waitFor(
      async () => {
        if (gone) throw new Error(`livekit-server exited:\n${output()}`);
        return (await fetch(`http://127.0.0.1:${port}/`)).ok;
      },
      { timeoutMs: 20_000, what: `livekit-server on port ${port}` },
    );
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n${output()}`, { cause: err });
  }
  const url = `ws://127.0.0.1:${port}`;
  return {
    url,
    apiKey,
    apiSecret,
    env: { ROOM_PROVIDER: 'livekit', LIVEKIT_URL: url, LIVEKIT_API_KEY: apiKey, LIVEKIT_API_SECRET: apiSecret },
    output,
    stop,
  };
}
