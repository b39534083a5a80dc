/**
 * `npm run client` regenerates the typed client's types (clients/typescript/src/schema.ts) from docs/openapi.json;
 * `npm run client -- --check` only tells whether the committed file is stale (exit 1), as the test does.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { CLIENT_SCHEMA, generateClientSchema } from './lib/typescript-client.ts';

const generated = await generateClientSchema();
if (process.argv.includes('--check')) {
  const current = readFileSync(CLIENT_SCHEMA, 'utf8');
  if (current !== generated) {
    console.error(`${CLIENT_SCHEMA} is stale: run \`npm run openapi && npm run client\``);
    process.exit(1);
  }
  console.log(`${CLIENT_SCHEMA} is up to date`);
} else {
  writeFileSync(CLIENT_SCHEMA, generated);
  console.log(`wrote ${CLIENT_SCHEMA}`);
}
