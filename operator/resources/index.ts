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
import { selfHostedSpeech, speechName } from './speech-common.ts';
import { buildSpeechDeployment } from './speech-deployment.ts';
import { buildSpeechHpa, buildSpeechNetworkPolicy, buildSpeechPdb, buildSpeechService, speechAutoscaling } from './speech-service.ts';

export type ChildKind = 'Deployment' | 'Service' | 'Ingress' | 'HorizontalPodAutoscaler' | 'PodDisruptionBudget' | 'NetworkPolicy';
export type { BuildOptions } from './options.ts';

/** A child by kind and name (a pool's children are named after it, its speech server's `<pool>-speech`). */
export interface ChildRef {
  kind: ChildKind;
  name: string;
}

export interface DesiredState {
  decision: FloorDecision;
  autoscaled: boolean;
  /** Children to apply, in order; the first is the workers' Deployment. */
  apply: KubeObject[];
  /** Optional children the pool no longer wants (to delete if the operator owns them). */
  absent: ChildRef[];
  /**
   * The speech server's Deployment (also in `apply`) when speech is self-hosted: applied like the
   * workers' (an HPA's count is never reset), and its availability is part of the status.
   */
  speech?: { deployment: KubeObject; autoscaled: boolean; floor: number };
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
  const own = (kind: ChildKind): ChildRef => ({ kind, name: pool.metadata.name });
  const absent: ChildRef[] = [];
  if (!ingress) absent.push(own('Ingress'));
  if (!hpa) absent.push(own('HorizontalPodAutoscaler'));
  if (!networkPolicy) absent.push(own('NetworkPolicy'));
  const speech = desiredSpeech(pool, options);
  apply.push(...speech.apply);
  absent.push(...speech.absent);
  return { decision, autoscaled, apply, absent, ...(speech.deployment ? { speech: speech.deployment } : {}) };
}

/** The speech server's children when speech is self-hosted; all of them absent otherwise. */
function desiredSpeech(
  pool: VoiceWorkerPool,
  options: BuildOptions,
): { apply: KubeObject[]; absent: ChildRef[]; deployment?: DesiredState['speech'] } {
  const name = speechName(pool);
  const s = selfHostedSpeech(pool);
  const hpa = s && buildSpeechHpa(pool, s);
  const networkPolicy = s && buildSpeechNetworkPolicy(pool, options);
  const apply = s
    ? [buildSpeechDeployment(pool, s, hpa ? undefined : s.replicas, options), buildSpeechService(pool), buildSpeechPdb(pool)]
    : [];
  if (hpa) apply.push(hpa);
  if (networkPolicy) apply.push(networkPolicy);
  const present = new Set(apply.map((c) => c.kind));
  const kinds: ChildKind[] = ['Deployment', 'Service', 'PodDisruptionBudget', 'HorizontalPodAutoscaler', 'NetworkPolicy'];
  const absent = kinds.filter((k) => !present.has(k)).map((kind) => ({ kind, name }));
  return s
    ? {
        apply,
        absent,
        deployment: { deployment: apply[0]!, autoscaled: hpa !== undefined, floor: speechAutoscaling(s)?.minReplicas ?? s.replicas },
      }
    : { apply, absent };
}
