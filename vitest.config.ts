import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**'],
    globalSetup: ['test/harness/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Two cores: integration files start real servers, so run at most two files at once.
    maxWorkers: 2,
    pool: 'forks',
    reporters: ['default'],
  },
});
