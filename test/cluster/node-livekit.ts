import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import { liveKitServerBinary, writeLiveKitConfig } from '../harness/livekit-server.ts';
import { waitFor } from '../harness/ports.ts';

/**
 * A real livekit-server on the host for the cluster's LiveKit pool, where both the pods (through the
 * pod bridge's gateway) and the host's respondent reach it: the node bridge address (10.213.0.1).
 * Single node, no Redis, keys of its own, free ports, node_ip that address, no external IP, no STUN.
 * The harness's server (test/harness/livekit-server.ts) is loopback-only, which pods cannot reach.
 */
export interface NodeLiveKit {
  /** ws://<node ip>:<port>: the pool's spec.livekit.url. */
  url: string;
  apiKey: string;
  apiSecret: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * A TCP port free a moment ago on every address: livekit-server listens for WebRTC over TCP on all
 * addresses (":port"), whatever `bind_addresses` says, so a port free only on the node address may be
 * taken on another (other tests on this machine).
 */
function freeTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '0.0.0.0', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/** The same for UDP (the WebRTC media port). */
function freeUdpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    socket.once('error', reject);
    socket.bind(0, '0.0.0.0', () => {
      const port = socket.address().port;
      socket.close(() => resolve(port));
    });
  });
}

export async function startNodeLiveKit(nodeIp: string): Promise<NodeLiveKit> {
  const binary = liveKitServerBinary();
  const [port, tcpPort, udpPort] = [await freeTcpPort(), await freeTcpPort(), await freeUdpPort()];
  const apiKey = `APIcluster${randomBytes(4).toString('hex')}`;
  const apiSecret = randomBytes(32).toString('base64url');
  // Only the node address as a candidate: the pods' and the host's one common address.
  const { dir, configFile } = writeLiveKitConfig({
    port,
    tcpPort,
    udpPort,
    apiKey,
    apiSecret,
    address: nodeIp,
    candidates: `${nodeIp}/32`,
  });
  const chunks: string[] = [];
  const child = spawn(binary, ['--config', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (d: Buffer) => chunks.push(d.toString()));
  child.stderr.on('data', (d: Buffer) => chunks.push(d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  const output = (): string => chunks.join('').slice(-4000);
  const stop = async (): Promise<void> => {
    // SIGTERM waits for participants to leave; the test is done with the rooms by now.
    if (!gone) {
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => {
        if (gone) throw new Error(`livekit-server exited:\n${output()}`);
        return (await fetch(`http://${nodeIp}:${port}/`)).ok;
      },
      { timeoutMs: 20_000, intervalMs: 100, what: `livekit-server on ${nodeIp}:${port}` },
    );
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n${output()}`, { cause: err });
  }
  return { url: `ws://${nodeIp}:${port}`, apiKey, apiSecret, output, stop };
}
