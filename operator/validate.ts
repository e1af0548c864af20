/**
 * Checks the CRD schema cannot make: combinations that depend on computed values, and the
 * Secrets a pool refers to. Pure: the Secrets are looked up by the caller.
 */
import { Reason } from './conditions.ts';
import { parseCron, wallClock } from './cron.ts';
import type { FloorDecision } from './floor.ts';
import { isLoaderEnv, RESERVED_ENV } from './resources/env.ts';
import { effectiveAutoscaling } from './resources/hpa.ts';
import { selfHostedSpeech } from './resources/speech-common.ts';
import type { SecretKeyRef, VoiceWorkerPool } from './types.ts';

export interface Problem {
  reason: string;
  message: string;
}

/** Every Secret key the pool's workers read, with the field that names it. */
export function secretRefs(pool: VoiceWorkerPool): Array<{ field: string; ref: SecretKeyRef }> {
  const refs: Array<{ field: string; ref: SecretKeyRef }> = [];
  for (const [field, ref] of Object.entries(pool.spec.secrets)) if (ref) refs.push({ field: `spec.secrets.${field}`, ref });
  const { redis } = pool.spec;
  if (redis.urlSecret) refs.push({ field: 'spec.redis.urlSecret', ref: redis.urlSecret });
  if (redis.passwordSecret) refs.push({ field: 'spec.redis.passwordSecret', ref: redis.passwordSecret });
  if (redis.tls?.caSecret) refs.push({ field: 'spec.redis.tls.caSecret', ref: redis.tls.caSecret });
  if (redis.sentinel?.passwordSecret) refs.push({ field: 'spec.redis.sentinel.passwordSecret', ref: redis.sentinel.passwordSecret });
  const { livekit, podTLS } = pool.spec;
  if (pool.spec.roomProvider === 'livekit' && livekit) {
    refs.push({ field: 'spec.livekit.apiKeyKey', ref: { name: livekit.secretName, key: livekit.apiKeyKey } });
    refs.push({ field: 'spec.livekit.apiSecretKey', ref: { name: livekit.secretName, key: livekit.apiSecretKey } });
  }
  if (podTLS) {
    refs.push({ field: 'spec.podTLS.secretName', ref: { name: podTLS.secretName, key: 'tls.crt' } });
    refs.push({ field: 'spec.podTLS.secretName', ref: { name: podTLS.secretName, key: 'tls.key' } });
  }
  const speech = selfHostedSpeech(pool);
  if (speech) refs.push({ field: 'spec.speech.selfHosted.tokenSecret', ref: speech.tokenSecret });
  (pool.spec.extraEnv ?? []).forEach((e, i) => {
    if (e.valueFrom) refs.push({ field: `spec.extraEnv[${i}].valueFrom.secretKeyRef`, ref: e.valueFrom.secretKeyRef });
  });
  return refs;
}

/** What a pool's Service spreads respondents over: more than one pod, unless each pod has its own address. */
export const POD_NAME_REFERENCE = '$(POD_NAME)';

/**
 * Local rooms live in the memory of the pod whose slot was claimed, and `room_url` is PUBLIC_URL: with
 * more than one replica behind one address, a respondent lands on a pod that does not hold the room.
 * Such a pool must say how respondents reach each pod: a `publicUrl` naming `$(POD_NAME)`, which
 * Kubernetes expands per pod (e.g. one Ingress host per pod).
 */
function localRoomsProblem(pool: VoiceWorkerPool, decision: FloorDecision): Problem | undefined {
  if (pool.spec.roomProvider !== 'local' || pool.spec.publicUrl?.includes(POD_NAME_REFERENCE)) return undefined;
  const autoscaling = effectiveAutoscaling(pool.spec);
  const mayRun = autoscaling ? Math.max(decision.floor, autoscaling.maxReplicas) : Math.max(pool.spec.replicas, decision.floor);
  if (mayRun <= 1) return undefined;
  return {
    reason: Reason.InvalidSpec,
    message:
      `VoiceWorkerPool ${pool.metadata.name}: roomProvider local keeps each room in one pod's memory, but this pool may run ${mayRun} ` +
      `replicas behind one address, ` +
      `so respondents would reach pods that do not hold their room; use roomProvider livekit or daily, run one replica (replicas: 1, autoscaling off), ` +
      `or set spec.publicUrl to an address per pod that names ${POD_NAME_REFERENCE} (e.g. https://${POD_NAME_REFERENCE}.rooms.example.com)`,
  };
}

/** A Secret's name is a DNS subdomain; '.' or '..' in a request path would name another object. */
const SECRET_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function specProblem(pool: VoiceWorkerPool, decision: FloorDecision): Problem | undefined {
  // The CRD refuses such names; a pool stored under an older CRD is refused here, before any GET.
  const badName = secretRefs(pool).find(({ ref }) => ref.name.length > 253 || !SECRET_NAME.test(ref.name));
  if (badName) {
    return {
      reason: Reason.InvalidSpec,
      message:
        `VoiceWorkerPool ${pool.metadata.name}: ${badName.field} names the Secret "${badName.ref.name}", which is ` +
        `not a valid Secret name (a DNS subdomain)`,
    };
  }
  for (const [i, s] of (pool.spec.preScaling?.schedules ?? []).entries()) {
    try {
      parseCron(s.cron);
      wallClock(0, s.timeZone);
    } catch (err) {
      return {
        reason: Reason.InvalidSpec,
        message:
          `VoiceWorkerPool ${pool.metadata.name}: spec.preScaling.schedules[${i}]: ` +
          `${err instanceof RangeError ? `unknown time zone "${s.timeZone}"` : (err as Error).message}`,
      };
    }
  }
  const managed = new Set<string>(RESERVED_ENV);
  const clash = (pool.spec.extraEnv ?? []).find((e) => managed.has(e.name));
  if (clash) {
    return {
      reason: Reason.InvalidSpec,
      message:
        `VoiceWorkerPool ${pool.metadata.name}: spec.extraEnv sets ${clash.name}, which the operator sets from the ` +
        `pool's fields; use those fields instead`,
    };
  }
  // The CRD refuses these too; a pool stored before that rule is refused here (nothing is applied).
  const loader = (pool.spec.extraEnv ?? []).find((e) => isLoaderEnv(e.name));
  if (loader) {
    return {
      reason: Reason.InvalidSpec,
      message:
        `VoiceWorkerPool ${pool.metadata.name}: spec.extraEnv sets ${loader.name}, which changes how the worker's ` +
        `processes start (a loader or start-up hook) and is reserved; remove it`,
    };
  }
  const autoscaling = pool.spec.autoscaling;
  const local = localRoomsProblem(pool, decision);
  if (local) return local;
  if (autoscaling?.enabled && decision.floor > autoscaling.maxReplicas) {
    return {
      reason: Reason.InvalidSpec,
      message:
        `VoiceWorkerPool ${pool.metadata.name}: the replica floor ${decision.floor} (sizing ${decision.fromSizing}` +
        `${decision.windows.length ? `, windows ${decision.windows.join(', ')}` : ''}) exceeds spec.autoscaling.maxReplicas ` +
        `${autoscaling.maxReplicas}; raise maxReplicas or lower the sizing inputs`,
    };
  }
  return undefined;
}

/**
 * `secrets` maps a Secret name to its data keys, undefined when the Secret does not exist, or null
 * when the operator may not read it (not checked; a missing one shows in the pods' status).
 */
export function secretProblem(pool: VoiceWorkerPool, secrets: Map<string, string[] | undefined | null>): Problem | undefined {
  for (const { field, ref } of secretRefs(pool)) {
    const keys = secrets.get(ref.name);
    if (keys === null) continue;
    if (keys === undefined) {
      return {
        reason: Reason.SecretNotFound,
        message: `Secret ${pool.metadata.namespace}/${ref.name} named by ${field} does not exist; create it or fix ${field}.name`,
      };
    }
    if (!keys.includes(ref.key)) {
      return {
        reason: Reason.SecretKeyNotFound,
        message: `Secret ${pool.metadata.namespace}/${ref.name} has no key "${ref.key}" named by ${field}.key`,
      };
    }
  }
  return undefined;
}
