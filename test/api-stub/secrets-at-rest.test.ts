import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localKeyProvider } from '../../api-stub/crypto/key-provider.ts';
import { openDatabase } from '../../api-stub/db/database.ts';
import { upsertWorkspace } from '../../api-stub/store/workspaces.ts';
import { listWebhookEndpoints, upsertWebhookEndpoint } from '../../api-stub/store/webhook-endpoints.ts';
import { openEndpointSecrets, sealStoredEndpointSecrets } from '../../api-stub/webhooks/endpoint-secrets.ts';
import { constructEvent } from '../../sdk/server/webhooks.ts';
import { call, connect, newSession, reportTokenOf, startRoutingStack, WHSEC, type RoutingStack } from './routing-harness.ts';

/**
 * Secrets at rest, checked on the raw bytes of the SQLite file and its WAL: the file is created 0600
 * (and its -wal/-shm), and webhook signing secrets are sealed like pipeline tokens, including rows
 * stored in clear by an older version (the migration at start).
 */
const mode = (path: string) => statSync(path).mode & 0o777;
const rawFiles = (dbPath: string) => [dbPath, `${dbPath}-wal`, `${dbPath}-shm`].filter(existsSync).map((p) => readFileSync(p));
const holds = (files: Buffer[], secret: string) => files.some((f) => f.includes(Buffer.from(secret)));

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'secrets-at-rest-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the SQLite file', () => {
  it('is created 0600 with its -wal and -shm, whatever the umask', () => {
    const path = join(dir, 'fresh.sqlite');
    const before = process.umask(0o022);
    try {
      const db = openDatabase(path);
      upsertWorkspace(db, { id: 'ws_1', name: 'One' }, 1);
      expect(existsSync(`${path}-wal`)).toBe(true);
      expect(existsSync(`${path}-shm`)).toBe(true);
      for (const p of [path, `${path}-wal`, `${path}-shm`]) expect(mode(p), p).toBe(0o600);
      db.close();
    } finally {
      process.umask(before);
    }
  });

  it('an existing world-readable file (and its WAL) is narrowed to 0600 when opened', () => {
    const path = join(dir, 'old.sqlite');
    openDatabase(path).close();
    writeFileSync(`${path}-wal`, '');
    chmodSync(path, 0o644);
    chmodSync(`${path}-wal`, 0o644);
    const db = openDatabase(path);
    expect(mode(path)).toBe(0o600);
    expect(mode(`${path}-wal`)).toBe(0o600);
    db.close();
  });
});

describe('webhook signing secrets', () => {
  it('rows stored in clear are sealed by the migration; the raw file and WAL no longer hold them, and they still open', async () => {
    const path = join(dir, 'legacy.sqlite');
    const secret = 'whsec_legacyplain0000000000';
    const db = openDatabase(path);
    upsertWorkspace(db, { id: 'ws_1', name: 'One' }, 1);
    // As an older version stored it: the plain JSON list.
    upsertWebhookEndpoint(db, 'ws_1', { url: 'https://hooks.example.com/a', secrets: [secret, 'whsec_legacyother000000000'] }, 1);
    expect(holds(rawFiles(path), secret)).toBe(true);
    const keys = localKeyProvider(randomBytes(32));
    expect(await sealStoredEndpointSecrets(db, keys)).toBe(1);
    expect(await sealStoredEndpointSecrets(db, keys)).toBe(0);
    const [endpoint] = listWebhookEndpoints(db, 'ws_1');
    expect(endpoint).toMatchObject({ sealed: true, secrets: null });
    const stored = String(db.prepare('SELECT secrets_json FROM webhook_endpoints').get()!.secrets_json);
    expect(stored).toMatch(/^penv1:/);
    expect(await openEndpointSecrets(stored, 'ws_1', keys)).toEqual([secret, 'whsec_legacyother000000000']);
    // Bound to its workspace and its purpose: it does not open as another workspace's.
    await expect(openEndpointSecrets(stored, 'ws_2', keys)).rejects.toThrow(/cannot be decrypted/);
    db.close();
    expect(holds(rawFiles(path), secret)).toBe(false);
  });

  describe('seeded through the api-stub with a key', () => {
    let stack: RoutingStack;
    beforeAll(async () => {
      stack = await startRoutingStack();
    });
    afterAll(async () => {
      await stack?.stop();
    });

    it('are never written in clear, and webhooks are still signed with them', async () => {
      const id = await newSession(stack);
      expect((await connect(stack, id)).status).toBe(200);
      const res = await call(
        'POST',
        `${stack.url}/api/v2/worker/sessions/${id}/outcome`,
        { status: 'completed', response: { transcriptKey: 's3://t/1', summary: 'ok' } },
        { authorization: `Bearer ${reportTokenOf([stack.hosted], id)}` },
      );
      expect(res.status).toBe(200);
      await stack.receiver.waitForCount(1, 5_000);
      const received = stack.receiver.received[0]!;
      expect(constructEvent(received.rawBody, String(received.headers['service-signature']), WHSEC).type).toBe('interview.completed');
      expect(holds(rawFiles(stack.dbPath), WHSEC)).toBe(false);
      expect(holds(rawFiles(stack.dbPath), WHSEC.slice('whsec_'.length))).toBe(false);
    });
  });
});
