/**
 * The VoiceWorkerPool resource as the operator sees it (after the API server applied the CRD's
 * defaults), and the names every part of the operator shares.
 */
export const GROUP = 'voice.service.io';
export const VERSION = 'v1beta1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'VoiceWorkerPool';
export const PLURAL = 'voiceworkerpools';
/** The one field manager of every server-side apply the operator makes. */
export const FIELD_MANAGER = 'voice-operator';
/** Sets the Deployment's first replica count when an HPA owns it afterwards (never re-applied). */
export const INITIAL_REPLICAS_MANAGER = 'voice-operator-initial-replicas';
export const WORKER_PORT = 7860;
/** The worker's plain-HTTP management port (metrics and probes), never exposed by the Service (C2). */
export const METRICS_PORT = 9090;
export const SERVICE_PORT = 443;
/** The speech server's API port (SPEECH_PORT) and its management port (SPEECH_METRICS_PORT). */
export const SPEECH_PORT = 7870;
export const SPEECH_METRICS_PORT = 9091;
export const POOL_LABEL = `${GROUP}/pool`;
export const MANAGED_BY = 'voice-operator';

export interface SecretKeyRef {
  name: string;
  key: string;
}

export interface PreScalingWindow {
  name?: string;
  start: string; // RFC 3339
  end: string; // RFC 3339
  replicas: number;
}

/** A recurring pre-scaling window: from each cron start (wall time in `timeZone`) for `durationMinutes`. */
export interface PreScalingSchedule {
  name?: string;
  cron: string;
  timeZone: string;
  durationMinutes: number;
  replicas: number;
}

export interface VoiceWorkerPoolSpec {
  /**
   * `digest` (sha256:...) pins the image; the tag stays for people reading it. Optional in the CRD:
   * reconcile fills in the operator's default (resources/options.ts) before any builder reads it.
   */
  image: { repository: string; tag: string; digest?: string; pullPolicy?: string; pullSecrets?: string[] };
  replicas: number;
  autoscaling?: {
    enabled: boolean;
    minReplicas: number;
    maxReplicas: number;
    targetCPUUtilizationPercentage: number;
    /** Scale on busy sessions per pod through the custom metrics API (needs an adapter, see docs/operator.md). */
    targetBusySessionsPerPod?: number;
    scaleDown: { stabilizationWindowSeconds: number; maxPercentPerMinute: number };
  };
  /** Without sessionsPerReplica, the operator derives it from the resource requests (operator/capacity.ts). */
  sizing?: { p95ConcurrentSessions: number; headroomPercent: number; sessionsPerReplica?: number };
  preScaling?: { leadSeconds: number; windows: PreScalingWindow[]; schedules?: PreScalingSchedule[] };
  resources: {
    requests: { cpu: string | number; memory: string };
    limits: { cpu: string | number; memory: string };
    /** Accelerators per worker, e.g. 1 GPU for ~10 sessions (requests = limits, as Kubernetes wants). */
    gpu?: { count: number; resourceName: string };
  };
  ingress?: { host: string; tlsSecretName: string; className?: string; annotations?: Record<string, string> };
  secrets: {
    workerToken: SecretKeyRef;
    llmApiKey?: SecretKeyRef;
    sttApiKey?: SecretKeyRef;
    ttsApiKey?: SecretKeyRef;
    roomApiKey?: SecretKeyRef;
    openaiApiKey?: SecretKeyRef;
  };
  redis: {
    url?: string;
    urlSecret?: SecretKeyRef;
    username?: string;
    passwordSecret?: SecretKeyRef;
    tls?: { enabled?: boolean; caSecret?: SecretKeyRef };
    sentinel?: { hosts: string[]; masterName?: string; username?: string; passwordSecret?: SecretKeyRef; tls?: boolean };
  };
  backendUrl: string;
  roomProvider: 'daily' | 'livekit' | 'local';
  /** The public address of the workers (PUBLIC_URL); defaults to the endpoint (ingress host or Service). */
  publicUrl?: string;
  /** LiveKit rooms (roomProvider livekit): the URL respondents and bots connect to, credentials from a Secret. */
  livekit?: { url: string; secretName: string; apiKeyKey: string; apiSecretKey: string };
  /** TLS in the pod (C4): a kubernetes.io/tls Secret mounted at /etc/voice-worker/tls. */
  podTLS?: { secretName: string };
  placement?: Placement;
  models?: {
    llm?: { baseUrl?: string; model?: string };
    stt?: { baseUrl?: string; model?: string };
    tts?: { baseUrl?: string; model?: string; voice?: string };
  };
  telemetry?: { otlpEndpoint?: string; serviceName: string };
  maxSessionSeconds?: number;
  /** Where transcripts go (file://<folder> or s3://<bucket>[/<prefix>]); the worker's default otherwise. */
  transcriptStore?: string;
  /** More worker environment (e.g. S3 credentials); names the operator sets are refused. */
  extraEnv?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef: SecretKeyRef } }>;
  terminationGracePeriodSeconds: number;
  /** Speech served inside the cluster (docs/operator.md, "Self-hosted speech"). */
  speech?: { selfHosted?: SelfHostedSpeech };
}

/** The pool's own speech server (speech/): a Deployment, Service, PDB and HPA named `<pool>-speech`. */
export interface SelfHostedSpeech {
  enabled: boolean;
  /** SPEECH_TOKEN of the server, and the workers' STT_API_KEY and TTS_API_KEY. */
  tokenSecret: SecretKeyRef;
  /** Defaults to the pool's worker image (the speech server ships in it as a second command). */
  image?: { repository: string; tag: string; digest?: string; pullPolicy?: string };
  replicas: number;
  autoscaling?: { enabled: boolean; minReplicas: number; maxReplicas: number; targetCPUUtilizationPercentage: number };
  resources: {
    requests: { cpu: string | number; memory: string };
    limits: { cpu: string | number; memory: string };
    gpu?: { count: number; resourceName: string };
  };
  placement?: Placement;
  /** SPEECH_THREADS, SPEECH_STT_CONCURRENCY, SPEECH_TTS_CONCURRENCY, SPEECH_QUEUE_CAPACITY, SPEECH_MAX_SESSIONS. */
  threads?: number;
  sttConcurrency?: number;
  ttsConcurrency?: number;
  queueCapacity?: number;
  maxSessions?: number;
}

/** Pod placement passed through to the worker pods unchanged (the API server validates the shapes). */
export interface Placement {
  nodeSelector?: Record<string, string>;
  tolerations?: unknown[];
  affinity?: Record<string, unknown>;
  topologySpreadConstraints?: unknown[];
  priorityClassName?: string;
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration: number;
  lastTransitionTime: string;
}

export interface VoiceWorkerPoolStatus {
  observedGeneration?: number;
  readyReplicas?: number;
  desiredFloor?: number;
  endpoint?: string;
  activeWindow?: string;
  /** The next instant a window or schedule raises or lowers the floor (RFC 3339). */
  nextBoundary?: string;
  conditions?: Condition[];
}

export interface ObjectMeta {
  name: string;
  namespace: string;
  uid: string;
  generation?: number;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
  ownerReferences?: OwnerReference[];
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface VoiceWorkerPool {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: VoiceWorkerPoolSpec;
  status?: VoiceWorkerPoolStatus;
}

/** A Kubernetes object as plain JSON: what builders return and server-side apply sends. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: OwnerReference[];
    [k: string]: unknown;
  };
  [field: string]: unknown;
}
