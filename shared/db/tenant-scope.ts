import type { STSClient } from '@aws-sdk/client-sts';
import { config } from '#shared/config.ts';
import { baseDb, createDynamoClient, instrument, type Db } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { TABLE_DATA_ACTIONS } from '#shared/db/table-access.ts';
import { UUID_RE } from '#shared/ids.ts';

/**
 * The session policy a function assumes for one tenant: data actions on the table and its indexes, only on
 * items whose partition key starts with the tenant's prefix. A bug in a handler therefore cannot read or
 * write another tenant's partition, whatever key it builds.
 */
export function tenantSessionPolicy(tableArn: string, tenantId: string) {
  if (!UUID_RE.test(tenantId)) throw new Error('tenant id must be a uuid'); // wildcards would widen LeadingKeys
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'TenantItems',
        Effect: 'Allow',
        Action: [...TABLE_DATA_ACTIONS.write],
        Resource: [tableArn, `${tableArn}/index/*`],
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [keys.leadingKeysPattern(tenantId)] } },
      },
    ],
  };
}

// STS is loaded on the first request that assumes a tenant role (AWS only), not at cold start.
let sts: Promise<{ client: STSClient; AssumeRoleCommand: typeof import('@aws-sdk/client-sts').AssumeRoleCommand }> | undefined;
const stsClient = () => (sts ??= import('@aws-sdk/client-sts').then(({ STSClient, AssumeRoleCommand }) => ({ client: new STSClient({ region: config.region }), AssumeRoleCommand })));
const scoped = new Map<string, { db: Db; expiresAt: number }>();
const REFRESH_MARGIN_MS = 5 * 60_000;

/**
 * The DynamoDB client a request uses for its tenant. Locally (no TENANT_ROLE_ARN) it is the shared client;
 * in AWS it holds STS credentials confined to the tenant, cached per tenant per container.
 */
export async function tenantDb(tenantId: string): Promise<Db> {
  const roleArn = config.tenantRoleArn;
  if (!roleArn) return baseDb();
  const cached = scoped.get(tenantId);
  if (cached && cached.expiresAt - REFRESH_MARGIN_MS > Date.now()) return cached.db;
  const tableArn = process.env.TABLE_ARN;
  if (!tableArn) throw new Error('TABLE_ARN is required with TENANT_ROLE_ARN');
  const { client, AssumeRoleCommand } = await stsClient();
  const out = await client.send(
    new AssumeRoleCommand({
      RoleArn: roleArn,
      RoleSessionName: `tenant-${tenantId}`.slice(0, 64),
      Policy: JSON.stringify(tenantSessionPolicy(tableArn, tenantId)),
      DurationSeconds: 3600,
    }),
  );
  const c = out.Credentials!;
  const db = instrument(
    createDynamoClient({ accessKeyId: c.AccessKeyId!, secretAccessKey: c.SecretAccessKey!, sessionToken: c.SessionToken!, expiration: c.Expiration }),
  );
  scoped.set(tenantId, { db, expiresAt: c.Expiration?.getTime() ?? Date.now() + 3600_000 });
  return db;
}
