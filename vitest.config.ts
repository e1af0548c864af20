import { defineConfig } from 'vitest/config';

/**
 * Files of the unit and integration suite that wait for scripts/test.sh's background builds, or must
 * not share the cores with them (scripts/test.sh runs the 'default' project while the builds run,
 * then these with the other projects; docs/testing.md, "Two runs").
 */
const AFTER_BUILDS = [
  // A real livekit-server (scripts/livekit-server.sh builds it); LiveKit rooms are real-time, too.
  'test/harness/livekit-server.test.ts',
  'test/worker/livekit-*.test.ts',
  'worker/rooms/room-provider.test.ts',
  // Turn-taking heard at real-time pace: its pauses must last as long as they sound.
  'test/worker/turn-taking.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    // A hook that starts a worker waits for its readiness (waitReady, 120 s) and then its warm bots
    // (waitIdleSlots, 60 s): on a fresh machine's first run, with cold caches and two files at once,
    // three workers took over 90 s. The hook's deadline covers both waits, so a slow start fails with
    // the waits' own message (which carries the worker's output), not a bare "Hook timed out".
    hookTimeout: 240_000,
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
          exclude: ['node_modules/**', 'dist/**', 'test/operator/**', 'test/cluster/**', 'test/e2e/**', ...AFTER_BUILDS],
          globalSetup: ['test/harness/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          // As 'default', for the files above that need a build or the cores to themselves.
          name: 'after-builds',
          include: AFTER_BUILDS,
          globalSetup: ['test/harness/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          // The browser end-to-end tests hold real-time conversations (a page's microphone, rooms, the
          // recogniser): they run after the parallel files, one at a time, so that no other file's
          // servers share the two cores with them (docs/testing.md, "Load"). Same Redis as 'default'.
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/harness/global-setup.ts'],
          sequence: { groupOrder: 1 },
          maxWorkers: 1,
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
          sequence: { groupOrder: 2 },
          testTimeout: 300_000,
          hookTimeout: 900_000,
        },
      },
    ],
  },
});
