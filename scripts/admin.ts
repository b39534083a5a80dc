/**
 * Operator commands (contract section 9). Each prints one JSON line.
 *   npm run admin -- create-tenant --name <name> --admin-email <email>
 *   npm run admin -- issue-token --tenant <tenant_uuid> (--user <user_uuid> | --service-account <account_uuid>) [--ttl <seconds>]
 *   npm run admin -- redrive      (local stack: dead letters back to their queue; stream records applied again)
 *   npm run admin -- set-limits --tenant <tenant_uuid> (--rps <n> [--burst <n>] [--user-rps <n>] [--user-burst <n>] | --reset)
 *   npm run admin -- import FILE --tenant <tenant_uuid> [--user <user_uuid>]   (goals from CSV or JSON, progress on stderr)
 * Local: reads DATA_DIR/stack.json written by `npm start`. Deployed: TABLE_NAME, ISSUER_URL and
 * ISSUER_KMS_KEY_ID from the stack's outputs, with AWS credentials in the environment.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dataDir = process.env.DATA_DIR ?? '.data';
const stackPath = join(dataDir, 'stack.json');
if (!process.env.TABLE_NAME) {
  if (!existsSync(stackPath)) {
    console.error(
      `No running local stack (${stackPath} missing): start it with \`npm start\`, or set TABLE_NAME, ISSUER_URL and ISSUER_KMS_KEY_ID for a deployed stack.`,
    );
    process.exit(2);
  }
  const stack = JSON.parse(readFileSync(stackPath, 'utf8'));
  Object.assign(process.env, {
    TABLE_NAME: stack.tableName,
    DYNAMODB_ENDPOINT: stack.dynamoEndpoint,
    ISSUER_URL: stack.issuer,
    ISSUER_KEY_FILE: join(dataDir, 'issuer-key.json'),
  });
}

const { runAdmin } = await import('./lib/admin-commands.ts');
try {
  const out = await runAdmin(process.argv.slice(2));
  console.log(JSON.stringify(out));
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
