import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startLocalStack } from '../../scripts/lib/local-stack.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    apiUrl: string;
    dynamoEndpoint: string;
    tableName: string;
    dataDir: string;
    issuerUrl: string;
  }
}

/** One local stack (DynamoDB Local in memory + the HTTP server running the real handlers) for the whole run. */
export default async function setup(project: TestProject) {
  // Tests hammer single tenants (concurrency, pagination); the limiter is unit-tested in test/unit/rate-limit.test.ts.
  process.env.TENANT_RATE_LIMIT_RPS ??= '0';
  // Webhook retries in seconds, not a day (test/e2e/webhooks*.test.ts wait for a delivery to end failed).
  process.env.WEBHOOK_RETRY_SCHEDULE ??= '1,2';
  process.env.WEBHOOK_TIMEOUT_MS ??= '4000';
  // A data source that never answers fails its sync in seconds (test/e2e/data-sources-sync.test.ts).
  process.env.DATA_SOURCE_TIMEOUT_MS ??= '1500';
  const dataDir = mkdtempSync(join(tmpdir(), 'goal-tracking-test-'));
  // AWS_FAITHFUL=1: the suite against the AWS-faithful mode (stale reads, faults; scripts/lib/aws-faithful.ts)
  const awsFaithful = process.env.AWS_FAITHFUL === '1';
  const stack = await startLocalStack({ port: 0, dataDir, inMemory: true, quiet: !process.env.TEST_LOGS, awsFaithful });
  project.provide('apiUrl', stack.url);
  project.provide('dynamoEndpoint', stack.dynamoEndpoint);
  project.provide('tableName', stack.tableName);
  project.provide('dataDir', dataDir);
  project.provide('issuerUrl', stack.issuer.issuer);
  return async () => {
    // how far the local change stream fell behind (tests waiting on derived state allow test/support/eventually.ts)
    console.log(`change stream: ${JSON.stringify(stack.streamStats())}`);
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
}
