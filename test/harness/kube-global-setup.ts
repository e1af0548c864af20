import 'vitest';
import type { TestProject } from 'vitest/node';
import { startKubeApiServer, type KubeApiServer } from './kube-apiserver.ts';

/**
 * One real API server (etcd + kube-apiserver) for every test of the "kube" project. Tests isolate
 * themselves with their own namespaces. Fails loudly when the binaries are missing.
 */
let server: KubeApiServer | undefined;

export async function setup(project: TestProject): Promise<void> {
  const started = Date.now();
  server = await startKubeApiServer();
  console.log(`kube-apiserver ready at ${server.url} in ${Date.now() - started} ms`);
  project.provide('kube', {
    url: server.url,
    caFile: server.caFile,
    clientCaCertFile: server.clientCaCertFile,
    clientCaKeyFile: server.clientCaKeyFile,
    adminKubeconfig: server.adminKubeconfig,
    etcdUrl: server.etcdUrl,
  });
}

export async function teardown(): Promise<void> {
  await server?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    kube: { url: string; caFile: string; clientCaCertFile: string; clientCaKeyFile: string; adminKubeconfig: string; etcdUrl: string };
  }
}
