import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Two cores: integration files start real servers, so run at most two files at once.
    maxWorkers: 2,
    pool: 'forks',
    reporters: ['default'],
    // fast-check from a fixed seed (FC_SEED to change it): no test depends on chance.
    setupFiles: ['test/harness/fixed-seed.ts'],
    // A project's globalSetup runs only when that project has files to run, so the API server
    // starts only for the Kubernetes tests and Redis only for the others.
    projects: [
      {
        extends: true,
        test: {
          name: 'default',
          include: ['**/*.test.ts'],
          exclude: ['node_modules/**', 'dist/**', 'test/operator/**', 'test/cluster/**'],
          globalSetup: ['test/harness/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          // Tests against one shared real kube-apiserver + etcd (scripts/kube-binaries.sh builds them).
          name: 'kube',
          include: ['test/operator/**/*.test.ts'],
          globalSetup: ['test/harness/kube-global-setup.ts'],
          testTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          // A real single-node Kubernetes (scripts/cluster.sh, docs/cluster.md), up once per run, as root.
          // Its tests build on each other in order: one file at a time.
          name: 'cluster',
          include: ['test/cluster/**/*.test.ts'],
          globalSetup: ['test/cluster/cluster-global-setup.ts'],
          fileParallelism: false,
          testTimeout: 300_000,
          hookTimeout: 900_000,
        },
      },
    ],
  },
});
