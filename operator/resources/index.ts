/** All children a pool should have now, from its spec and the clock. Pure. */
import { decideFloor, type FloorDecision } from '../floor.ts';
import type { KubeObject, VoiceWorkerPool } from '../types.ts';
import { buildDeployment } from './deployment.ts';
import { buildHpa, effectiveAutoscaling } from './hpa.ts';
import { buildIngress } from './ingress.ts';
import { buildNetworkPolicy } from './networkpolicy.ts';
import { DEFAULT_BUILD_OPTIONS, type BuildOptions } from './options.ts';
import { buildPdb } from './pdb.ts';
import { buildService } from './service.ts';

export type ChildKind = 'Deployment' | 'Service' | 'Ingress' | 'HorizontalPodAutoscaler' | 'PodDisruptionBudget' | 'NetworkPolicy';
export type { BuildOptions } from './options.ts';

export interface DesiredState {
  decision: FloorDecision;
  autoscaled: boolean;
  /** Children to apply, in order. */
  apply: KubeObject[];
  /** Optional kinds the pool no longer wants (to delete if the operator owns them). */
  absent: ChildKind[];
}

export function desiredState(pool: VoiceWorkerPool, now: Date, options: BuildOptions = DEFAULT_BUILD_OPTIONS): DesiredState {
  const decision = decideFloor(pool.spec, now);
  const autoscaled = effectiveAutoscaling(pool.spec) !== undefined;
  const hpa = buildHpa(pool, decision.floor);
  const ingress = buildIngress(pool);
  const networkPolicy = buildNetworkPolicy(pool, options);
  const apply = [buildDeployment(pool, autoscaled ? undefined : decision.floor, options), buildService(pool), buildPdb(pool)];
  if (ingress) apply.push(ingress);
  if (hpa) apply.push(hpa);
  if (networkPolicy) apply.push(networkPolicy);
  const absent: ChildKind[] = [];
  if (!ingress) absent.push('Ingress');
  if (!hpa) absent.push('HorizontalPodAutoscaler');
  if (!networkPolicy) absent.push('NetworkPolicy');
  return { decision, autoscaled, apply, absent };
}
