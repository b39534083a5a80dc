import { defineConfig } from 'vitest/config';

/**
 * The fast lane (`npm run test:unit`): pure tests only, no DynamoDB Local, no Java, no local stack. Every
 * file under test/unit/ must run without the global setup; tests that touch data live under test/e2e/ and
 * test/store/ and run with vitest.config.ts.
 */
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts'],
    env: { TABLE_NAME: 'unit-tests-have-no-table', AWS_REGION: 'us-east-1', POWERTOOLS_METRICS_DISABLED: 'true' },
    testTimeout: 20_000,
    pool: 'threads',
    // Vitest's default is one worker on a 2-core machine; the lane is CPU-bound (imports, transforms), so use both.
    maxWorkers: 2,
  },
});
