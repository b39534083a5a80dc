/**
 * `npm start` — the whole service on this machine. Options: `--in-memory` (throwaway data), `--port N`,
 * `--aws-faithful` (DynamoDB as AWS may behave: stale eventually consistent reads, throttling and other faults;
 * AWS_FAITHFUL_STALE_MS, default 1000, and AWS_FAITHFUL_FAULT_RATE, default 0.02).
 * Environment: PORT (3000), DATA_DIR (.data), DYNAMODB_PORT (8000 + random fallback), ISSUER_URL, JWT_AUDIENCE,
 * API_BASE_URL (the public URL the service names itself by; default: its own URL).
 */
import { parseArgs } from 'node:util';
import { freezeObjectPrototype } from '#shared/freeze-prototype.ts';
import { startLocalStack } from './lib/local-stack.ts';

// Object.prototype frozen before this program does anything (its imports only define modules), as every deployed
// function does at init (shared/freeze-prototype.ts); startLocalStack does it too, for the other programs that
// start a stack.
freezeObjectPrototype();

const { values } = parseArgs({
  options: {
    'in-memory': { type: 'boolean', default: false },
    port: { type: 'string' },
    'aws-faithful': { type: 'boolean', default: false },
  },
});

const stack = await startLocalStack({
  port: Number(values.port ?? process.env.PORT ?? 3000),
  dataDir: process.env.DATA_DIR ?? '.data',
  inMemory: values['in-memory'],
  awsFaithful: values['aws-faithful'],
  dynamoPort: process.env.DYNAMODB_PORT ? Number(process.env.DYNAMODB_PORT) : undefined,
}).catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
console.log(
  `\n  Goal-tracking API: ${stack.url}\n  OpenAPI: ${stack.url}/openapi.json\n  Create a tenant: npm run admin -- create-tenant --name Acme --admin-email admin@acme.test\n  Ctrl-C stops everything.\n`,
);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.log('Stopping…');
    stack.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
