import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openSecret } from '../../api-stub/crypto/envelope.ts';
import { localKeyProvider } from '../../api-stub/crypto/key-provider.ts';
import { openDatabase } from '../../api-stub/db/database.ts';
import { applySeed, parseSeed } from '../../api-stub/seed.ts';
import { selfHostSeedHooks } from '../../api-stub/self-host/seed-hook.ts';
import { countSelfHostWorkspaces, getSelfHost } from '../../api-stub/self-host/settings-store.ts';
import { A, routingSeed, WORKER_TOKEN } from './routing-harness.ts';

const keys = localKeyProvider(randomBytes(32));
const endpoint = 'https://worker.customer.example/';

describe('self-host settings in the seed file', () => {
  it('seals the token on the way in, re-applies idempotently and clears with a null endpoint', async () => {
    const db = openDatabase(':memory:');
    const seed = parseSeed(routingSeed('http://127.0.0.1:9/hook', { pipelineEndpoint: endpoint, pipelineToken: WORKER_TOKEN }));
    const summary = applySeed(db, seed, Date.now(), await selfHostSeedHooks(seed, keys));
    expect(summary.selfHostApplied).toBe(1);
    const stored = getSelfHost(db, A.ws)!;
    expect(stored.pipelineEndpoint).toBe(endpoint);
    expect(stored.sealedToken).not.toContain(WORKER_TOKEN);
    expect(await openSecret(stored.sealedToken, A.ws, keys)).toBe(WORKER_TOKEN);
    expect(countSelfHostWorkspaces(db)).toBe(1);

    applySeed(db, seed, Date.now(), await selfHostSeedHooks(seed, keys));
    expect(countSelfHostWorkspaces(db)).toBe(1);

    const cleared = parseSeed(routingSeed('http://127.0.0.1:9/hook', { pipelineEndpoint: null } as never));
    applySeed(db, cleared, Date.now(), await selfHostSeedHooks(cleared, keys));
    expect(getSelfHost(db, A.ws)).toBeNull();
    expect(countSelfHostWorkspaces(db)).toBe(0);
  });

  it('refuses a seed token without a key, and an endpoint without a token, before writing anything', async () => {
    const seed = parseSeed(routingSeed('http://127.0.0.1:9/hook', { pipelineEndpoint: endpoint, pipelineToken: WORKER_TOKEN }));
    const err = (await selfHostSeedHooks(seed, null).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toMatch(/^PIPELINE_KEK: not set/);
    expect(err.message).not.toContain(WORKER_TOKEN);
    const noToken = parseSeed(routingSeed('http://127.0.0.1:9/hook', { pipelineEndpoint: endpoint } as never));
    await expect(selfHostSeedHooks(noToken, keys)).rejects.toThrow(/selfHost\.pipelineToken is required/);
    expect(() =>
      parseSeed(
        routingSeed('http://127.0.0.1:9/hook', { pipelineEndpoint: 'http://worker.customer.example/', pipelineToken: WORKER_TOKEN }),
      ),
    ).toThrow(/pipelineEndpoint/);
  });
});
