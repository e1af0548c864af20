/**
 * The informer over real watches: a quiet watch stays open past 60 s, a watch the server ends is
 * resumed without a relist, and 410 Gone (an expired resourceVersion) relists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeClient } from '../../operator/kube.ts';
import { Informer, type WatchLifecycle } from '../../operator/watch.ts';
import { KubeClient as Client } from '../../operator/kube.ts';
import { startApiProxy } from './api-proxy.ts';
import { adminClient, createNamespace, eventually, kubeconfigFor, kubeInfo } from './helpers.ts';

let kube: KubeClient;
beforeAll(async () => {
  kube = await adminClient();
});
afterAll(() => kube?.close());

async function secret(ns: string, name: string): Promise<void> {
  await kube.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { a: '1' } },
  });
}

async function configMap(ns: string, name: string): Promise<void> {
  await kube.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } },
  });
}

function recorder() {
  const lifecycle: WatchLifecycle[] = [];
  const seen: string[] = [];
  return {
    lifecycle,
    seen,
    onLifecycle: (e: WatchLifecycle) => lifecycle.push(e),
    onEvent: (type: string, o: { metadata: { name: string } }) => seen.push(`${type} ${o.metadata.name}`),
  };
}

// Concurrent: the 65 s test runs while the others do.
describe.concurrent('informer', () => {
  it('holds a quiet watch open for more than 60 s and still delivers events on it', async () => {
    const ns = await createNamespace(kube, 'quiet');
    const r = recorder();
    // Secrets, not ConfigMaps: ConfigMap watches bypass the watch cache here (for the 410 test), and
    // that test compacts etcd while this one waits, which can end a ConfigMap watch with 410 Gone.
    const informer = new Informer({ kube, resource: 'secrets', path: `/api/v1/namespaces/${ns}/secrets`, watchTimeoutSeconds: 600, ...r });
    informer.start();
    try {
      await eventually(
        async () => r.lifecycle,
        (l) => l.includes('watch-started'),
        'watch started',
      );
      const opened = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 65_000)); // the point of the test is the passing time itself
      await secret(ns, 'after-65s');
      await eventually(
        async () => r.seen,
        (s) => s.includes('ADDED after-65s'),
        'event after 65 s',
        5_000,
      );
      expect(Date.now() - opened).toBeGreaterThan(60_000);
      // One list, one watch: never dropped and reopened.
      expect(r.lifecycle.filter((e) => e === 'watch-started')).toHaveLength(1);
      expect(r.lifecycle).not.toContain('error');
    } finally {
      await informer.stop();
    }
  }, 100_000);

  it('relists on its timer from the watch cache (nothing older than it saw), never as a quorum read', async () => {
    const ns = await createNamespace(kube, 'relist');
    await secret(ns, 'one');
    const proxy = await startApiProxy(kubeInfo().adminKubeconfig);
    const behind = await Client.fromKubeConfig(proxy.kubeconfig);
    const r = recorder();
    // The server ends each watch after 1 s; the relist timer has run out by then.
    const informer = new Informer({
      kube: behind,
      resource: 'secrets',
      path: `/api/v1/namespaces/${ns}/secrets`,
      relistMs: 200,
      watchTimeoutSeconds: 1,
      ...r,
    });
    informer.start();
    try {
      await eventually(
        async () => r.lifecycle.filter((e) => e === 'listed').length,
        (n) => n >= 3,
        'two periodic relists',
        30_000,
      );
      const lists = proxy.forwarded.filter(
        (f) => f.method === 'GET' && f.path.startsWith(`/api/v1/namespaces/${ns}/secrets?`) && !f.path.includes('watch=true'),
      );
      expect(lists.length).toBeGreaterThanOrEqual(3);
      expect(lists[0]!.path).not.toContain('resourceVersion');
      for (const l of lists.slice(1)) expect(l.path).toMatch(/resourceVersion=\d+&resourceVersionMatch=NotOlderThan/);
      expect(r.seen).toEqual(['ADDED one']); // the relists found nothing new and invented nothing
    } finally {
      await informer.stop();
      behind.close();
      await proxy.close();
    }
  });

  it('resumes a watch the server ended from the last resourceVersion, without relisting', async () => {
    const ns = await createNamespace(kube, 'resume');
    const r = recorder();
    // Secrets (served from the watch cache): the 410 test's compaction of etcd, running beside this
    // one, could otherwise expire a ConfigMap resumption and force a legitimate relist.
    const informer = new Informer({ kube, resource: 'secrets', path: `/api/v1/namespaces/${ns}/secrets`, watchTimeoutSeconds: 1, ...r });
    informer.start();
    try {
      await eventually(
        async () => r.lifecycle,
        (l) => l.filter((e) => e === 'watch-ended').length >= 2,
        'two server-side watch endings',
        15_000,
      );
      await secret(ns, 'later');
      await eventually(
        async () => r.seen,
        (s) => s.includes('ADDED later'),
        'event after resumption',
      );
      expect(r.lifecycle.filter((e) => e === 'listed')).toHaveLength(1);
      expect(informer.items().map((i) => i.metadata.name)).toEqual(['later']);
    } finally {
      await informer.stop();
    }
  });

  it('relists after 410 Gone and notices what changed meanwhile', async () => {
    const ns = await createNamespace(kube, 'gone');
    await configMap(ns, 'existing');
    const list = await kube.get<{ metadata: { resourceVersion: string } }>(`/api/v1/namespaces/${ns}/configmaps`);
    // Compact etcd's history up to now, as the API server does every few minutes: resuming from an
    // older version (here 1) is then answered with 410 Gone.
    const compact = await fetch(`${kubeInfo().etcdUrl}/v3/kv/compaction`, {
      method: 'POST',
      body: JSON.stringify({ revision: list.metadata.resourceVersion, physical: true }),
    });
    expect(compact.status).toBe(200);
    const r = recorder();
    const informer = new Informer({
      kube,
      resource: 'configmaps',
      path: `/api/v1/namespaces/${ns}/configmaps`,
      initialResourceVersion: '1',
      ...r,
    });
    informer.start();
    try {
      await eventually(
        async () => r.lifecycle,
        (l) => l.includes('listed'),
        'relist after 410',
      );
      expect(r.lifecycle.slice(0, 3)).toEqual(['watch-started', 'gone', 'listed']);
      expect(r.seen).toContain('ADDED existing');
      await configMap(ns, 'new');
      await eventually(
        async () => r.seen,
        (s) => s.includes('ADDED new'),
        'event after the relist',
      );
    } finally {
      await informer.stop();
    }
  });

  it('keeps retrying with backoff after other errors (403 here) and recovers once allowed', async () => {
    const ns = await createNamespace(kube, 'denied');
    const user = `watcher-${ns}`;
    const client = await Client.fromKubeConfig(kubeconfigFor(user));
    const r = recorder();
    const informer = new Informer({
      kube: client,
      resource: 'configmaps',
      path: `/api/v1/namespaces/${ns}/configmaps`,
      maxBackoffMs: 1000,
      ...r,
    });
    informer.start();
    try {
      await eventually(
        async () => r.lifecycle,
        (l) => l.filter((e) => e === 'error').length >= 2,
        'repeated errors while forbidden',
      );
      expect(r.lifecycle).not.toContain('listed');
      await kube.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
        body: {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'Role',
          metadata: { name: 'read' },
          rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'watch'] }],
        },
      });
      await kube.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
        body: {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: 'read' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read' },
          subjects: [{ kind: 'User', name: user }],
        },
      });
      await configMap(ns, 'visible');
      await eventually(
        async () => r.seen,
        (s) => s.includes('ADDED visible'),
        'events once allowed',
        15_000,
      );
      expect(informer.synced).toBe(true);
    } finally {
      await informer.stop();
      client.close();
    }
  });
});
