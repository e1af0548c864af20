import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { Database } from './db/database.ts';
import { transaction } from './db/database.ts';
import { hasIdForm } from '../lib/ids.ts';
import { StrictInterviewSchema } from '../lib/interview.ts';
import { upsertWorkspace } from './store/workspaces.ts';
import { classifyKey, upsertKey } from './store/keys.ts';
import { DEPLOYMENT_STATUSES, upsertDeployment } from './store/deployments.ts';
import { upsertWebhookEndpoint } from './store/webhook-endpoints.ts';
import { setEndpointRetries } from './webhooks/outbox-store.ts';

/**
 * The seed file (API_STUB_SEED): workspaces with their keys, deployments (with interview
 * definitions), webhook endpoints with signing secrets and self-host settings. Applied at start as
 * an upsert in one transaction: re-applying the same file changes nothing; a bad file changes nothing.
 * Format and example: docs/api.md, examples/seed.json.
 */
const isoTimestamp = z.string().refine((v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(v) && !Number.isNaN(Date.parse(v)), {
  message: 'expected an ISO 8601 UTC timestamp such as 2030-01-01T00:00:00Z',
});

const keyOf = (kind: 'publishable' | 'secret') =>
  z.string().refine((k) => classifyKey(k)?.kind === kind, {
    message:
      kind === 'publishable'
        ? 'expected pk_test_… or pk_live_… (8+ letters or digits after the prefix)'
        : 'expected sk_… (8+ letters or digits after the prefix)',
  });

const webhookEndpointSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/ }),
  secrets: z
    .array(z.string().regex(/^whsec_[A-Za-z0-9+/=_-]{8,}$/, 'expected whsec_ followed by 8+ characters'))
    .min(1)
    .max(10),
  // Opt-in delivery retries with backoff (docs/webhooks.md); off by default, as the spec says.
  retries: z.boolean().default(false),
});

const selfHostSchema = z.strictObject({
  pipelineEndpoint: z.url({ protocol: /^https$/ }).nullable(),
  pipelineToken: z.string().min(16).max(512).nullable().default(null),
});

const workspaceSchema = z.strictObject({
  id: z.string().refine((v) => hasIdForm(v, 'ws'), { message: 'expected ws_<id>' }),
  name: z.string().min(1).max(200),
  keys: z.strictObject({ publishable: z.array(keyOf('publishable')).default([]), secret: z.array(keyOf('secret')).default([]) }),
  deployments: z
    .array(
      z.strictObject({
        id: z.string().refine((v) => hasIdForm(v, 'dpl'), { message: 'expected dpl_<id>' }),
        status: z.enum(DEPLOYMENT_STATUSES),
        expiresAt: isoTimestamp.nullable().default(null),
        interview: StrictInterviewSchema,
      }),
    )
    .default([]),
  webhookEndpoints: z.array(webhookEndpointSchema).default([]),
  selfHost: selfHostSchema.nullable().default(null),
});

export const seedSchema = z.strictObject({ workspaces: z.array(workspaceSchema) });
export type Seed = z.output<typeof seedSchema>;
export type SelfHostSeed = NonNullable<Seed['workspaces'][number]['selfHost']>;

export class SeedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SeedError';
  }
}

/** Validates a parsed seed; the error names the path of every bad field. */
export function parseSeed(input: unknown, source = 'seed'): Seed {
  const result = seedSchema.safeParse(input);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new SeedError(`${source} is invalid:\n  ${problems.join('\n  ')}`);
  }
  return result.data;
}

export function loadSeedFile(path: string): Seed {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new SeedError(`API_STUB_SEED: cannot read ${path}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new SeedError(`API_STUB_SEED: ${path} is not valid JSON: ${(err as Error).message}`);
  }
  return parseSeed(json, `API_STUB_SEED ${path}`);
}

export interface SeedHooks {
  /**
   * Stores a workspace's self-host settings (pipelineEndpoint, and pipelineToken encrypted at rest).
   * Runs inside the seed transaction. Without it, selfHost entries are reported back unapplied.
   */
  applySelfHost?: (db: Database, workspaceId: string, settings: SelfHostSeed, now: number) => void;
  /** The sealed signing secrets of an endpoint (sealed before the transaction); absent: stored as a plain list. */
  sealedWebhookSecrets?: (workspaceId: string, url: string) => string | undefined;
}

export interface SeedSummary {
  workspaces: number;
  keys: number;
  deployments: number;
  webhookEndpoints: number;
  selfHostApplied: number;
  selfHostSkipped: string[];
}

export function applySeed(db: Database, seed: Seed, now: number, hooks: SeedHooks = {}): SeedSummary {
  const summary: SeedSummary = { workspaces: 0, keys: 0, deployments: 0, webhookEndpoints: 0, selfHostApplied: 0, selfHostSkipped: [] };
  transaction(db, () => {
    for (const ws of seed.workspaces) {
      upsertWorkspace(db, { id: ws.id, name: ws.name }, now);
      summary.workspaces++;
      for (const key of [...ws.keys.publishable, ...ws.keys.secret]) {
        upsertKey(db, ws.id, key, now);
        summary.keys++;
      }
      for (const d of ws.deployments) {
        const expiresAt = d.expiresAt === null ? null : Date.parse(d.expiresAt);
        upsertDeployment(db, { id: d.id, workspaceId: ws.id, status: d.status, expiresAt, interview: d.interview }, now);
        summary.deployments++;
      }
      for (const endpoint of ws.webhookEndpoints) {
        const stored = upsertWebhookEndpoint(
          db,
          ws.id,
          { ...endpoint, sealedSecrets: hooks.sealedWebhookSecrets?.(ws.id, endpoint.url) },
          now,
        );
        setEndpointRetries(db, stored.id, endpoint.retries);
        summary.webhookEndpoints++;
      }
      if (ws.selfHost) {
        if (hooks.applySelfHost) {
          hooks.applySelfHost(db, ws.id, ws.selfHost, now);
          summary.selfHostApplied++;
        } else {
          summary.selfHostSkipped.push(ws.id);
        }
      }
    }
  });
  return summary;
}
