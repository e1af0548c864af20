import type { KeyProvider } from './crypto/key-provider.ts';
import type { EgressPolicy } from './outbound/egress-guard.ts';
import { createSpawnLimiter, type SpawnLimiter } from './connect/spawn-limiter.ts';
import { createHostedCapacity, type HostedCapacity } from './connect/hosted-share.ts';
import { loadTrustedCas } from './outbound/trust.ts';

/**
 * What connect routing, the self-host admin endpoint and outcome reports need besides the database:
 * the key-encryption key (null when PIPELINE_KEK is not configured), the egress policy and trusted
 * CAs for outbound calls, the per-workspace spawn limiter, and a way to wake the outbox dispatcher
 * after an enqueue. Built by runtime.ts; AppDeps carries it as `routing`.
 */
export interface RoutingDeps {
  keys: KeyProvider | null;
  policy: EgressPolicy;
  ca?: string[];
  limiter: SpawnLimiter;
  /** The hosted pool's capacity, configured or learned from its refusals (connect/hosted-share.ts). */
  hostedCapacity: HostedCapacity;
  wakeOutbox: () => void;
}

/** Routing dependencies without a key or a dispatcher (apps built without a runtime, e.g. in other parts' tests). */
export function standaloneRoutingDeps(config: {
  egressAllowHosts: ReadonlySet<string>;
  pipelineExtraCaFile: string | null;
  spawnMaxInFlightPerWorkspace: number;
  hostedPipelineCapacity: number | null;
}): RoutingDeps {
  const ca = loadTrustedCas(config.pipelineExtraCaFile);
  return {
    keys: null,
    policy: { allowHosts: config.egressAllowHosts },
    ...(ca ? { ca } : {}),
    limiter: createSpawnLimiter(config.spawnMaxInFlightPerWorkspace),
    hostedCapacity: createHostedCapacity(config.hostedPipelineCapacity),
    wakeOutbox: () => undefined,
  };
}
