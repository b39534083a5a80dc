import type { AssumeRoleCommandInput, STSClient } from '@aws-sdk/client-sts';
import { config } from '#shared/config.ts';
import { baseDb, createDynamoClient, instrument, type Db } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { TABLE_DATA_ACTIONS } from '#shared/db/table-access.ts';
import { UUID_RE } from '#shared/ids.ts';

/**
 * The session tag naming a tenant session's tenant. The tenant roles' own policies confine items to
 * `dynamodb:LeadingKeys` = `T#${aws:PrincipalTag/tenant}#*`, and their trust policies refuse any AssumeRole
 * without this tag (infra/constructs/tenant-data.ts): confinement holds whatever session policy a caller
 * passes, or none.
 */
export const TENANT_TAG = 'tenant';
/** The IAM policy variable of the tag. Literal in CDK strings: CDK tokens are `${Token[...]}` only. */
export const TENANT_TAG_VARIABLE = `\${aws:PrincipalTag/${TENANT_TAG}}`;
/**
 * The shape the trust policy requires of the tag's value: a uuid's 36 characters with its dashes (StringLike has
 * no character classes; a session tag value cannot hold `*`, `?` or `#` anyway, so it cannot widen the pattern).
 */
export const TENANT_TAG_SHAPE = '????????-????-????-????-????????????';
/** The LeadingKeys pattern of the tenant roles' data statements: keys.ts's pattern for the tagged tenant. */
export const TENANT_TAG_LEADING_KEYS = keys.leadingKeysPattern(TENANT_TAG_VARIABLE);

const requireUuid = (tenantId: string) => {
  if (!UUID_RE.test(tenantId)) throw new Error('tenant id must be a uuid'); // wildcards would widen LeadingKeys
};

/**
 * The session policy a function passes for one tenant: data actions on the table and its indexes, only on
 * items whose partition key starts with the tenant's prefix. A second layer: the tenant tag alone already
 * confines the session (see TENANT_TAG).
 */
export function tenantSessionPolicy(tableArn: string, tenantId: string) {
  requireUuid(tenantId);
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

/** The AssumeRole request for one tenant's session: the tenant tag (what the role confines to) and the session policy. */
export function tenantAssumeRoleInput(roleArn: string, tableArn: string, tenantId: string): AssumeRoleCommandInput {
  requireUuid(tenantId);
  return {
    RoleArn: roleArn,
    RoleSessionName: `tenant-${tenantId}`.slice(0, 64),
    Tags: [{ Key: TENANT_TAG, Value: tenantId }],
    Policy: JSON.stringify(tenantSessionPolicy(tableArn, tenantId)),
    DurationSeconds: 3600,
  };
}

// STS is loaded on the first request that assumes a tenant role (AWS only), not at cold start.
let sts: Promise<{ client: STSClient; AssumeRoleCommand: typeof import('@aws-sdk/client-sts').AssumeRoleCommand }> | undefined;
const stsClient = () =>
  (sts ??= import('@aws-sdk/client-sts').then(({ STSClient, AssumeRoleCommand }) => ({
    client: new STSClient({ region: config.region }),
    AssumeRoleCommand,
  })));
const scoped = new Map<string, { db: Db; expiresAt: number }>();
const REFRESH_MARGIN_MS = 5 * 60_000;
/**
 * Tenant sessions a container keeps, the least recently used dropped first: a tenant named by an anonymous request
 * (a made-up client id or push secret, contract section 19) gets a session too, and must not grow the map for the
 * container's life.
 */
const MAX_SESSIONS = 1000;

/**
 * The DynamoDB client a request uses for its tenant. Locally (no TENANT_ROLE_ARN) it is the shared client;
 * in AWS it holds STS credentials confined to the tenant, cached per tenant per container.
 */
export async function tenantDb(tenantId: string): Promise<Db> {
  const roleArn = config.tenantRoleArn;
  if (!roleArn) return baseDb();
  const cached = scoped.get(tenantId);
  if (cached && cached.expiresAt - REFRESH_MARGIN_MS > Date.now()) {
    scoped.delete(tenantId); // most recently used last
    scoped.set(tenantId, cached);
    return cached.db;
  }
  const tableArn = process.env.TABLE_ARN;
  if (!tableArn) throw new Error('TABLE_ARN is required with TENANT_ROLE_ARN');
  const { client, AssumeRoleCommand } = await stsClient();
  const out = await client.send(new AssumeRoleCommand(tenantAssumeRoleInput(roleArn, tableArn, tenantId)));
  const c = out.Credentials!;
  const db = instrument(
    createDynamoClient({
      accessKeyId: c.AccessKeyId!,
      secretAccessKey: c.SecretAccessKey!,
      sessionToken: c.SessionToken!,
      expiration: c.Expiration,
    }),
  );
  scoped.delete(tenantId);
  scoped.set(tenantId, { db, expiresAt: c.Expiration?.getTime() ?? Date.now() + 3600_000 });
  if (scoped.size > MAX_SESSIONS) scoped.delete(scoped.keys().next().value!);
  return db;
}
