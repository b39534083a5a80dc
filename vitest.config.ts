import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/setup/global.ts'],
    setupFiles: ['test/setup/env.ts'],
    // no EMF metric lines from handlers a test calls in its own process (the local stack sets the same)
    env: { POWERTOOLS_METRICS_DISABLED: 'true' },
    include: ['test/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Vitest's default on a 2-core machine is one worker: the files would run one after another while the stack
    // (the global setup's process) and DynamoDB Local wait on each other. Three overlap those waits.
    maxWorkers: 3,
  },
});
