import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/setup/global.ts'],
    setupFiles: ['test/setup/env.ts'],
    include: ['test/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
