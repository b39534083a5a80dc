import { parseArgs } from 'node:util';
import { configuredIssuer, DEFAULT_TTL_SECONDS } from '#shared/auth/issuer.ts';
import { roleScopes } from '#shared/auth/scopes.ts';
import { baseDb } from '#shared/db/client.ts';
import { getEntity } from '#shared/db/reads.ts';
import { setLimits } from './set-limits.ts';
import { createTenant } from '#shared/domain/tenants.ts';
import { serviceAccountEntity } from '#shared/domain/service-accounts/entity.ts';
import { tokenIssuableInMs } from '#shared/domain/service-accounts/decide.ts';
import { sleep } from '#shared/clock.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import { UUID_RE } from '#shared/ids.ts';
import { runImportCommand } from './import-command.ts';

/** `--ttl <seconds>`: a positive whole number of seconds, at most 30 days. */
function parseTtl(raw: string | undefined): number {
  const ttl = Number(raw ?? DEFAULT_TTL_SECONDS);
  if (!Number.isInteger(ttl) || ttl <= 0 || ttl > 30 * 86400)
    throw new Error('--ttl must be a positive number of seconds (at most 30 days)');
  return ttl;
}

/** Operator commands; environment (TABLE_NAME, DYNAMODB_ENDPOINT or AWS credentials, issuer) set by the caller. */
export async function runAdmin(argv: string[]): Promise<Record<string, unknown>> {
  const [command, ...rest] = argv;
  const db = baseDb(); // operator path: table-wide access by design (see docs/deploy.md)
  if (command === 'create-tenant') {
    const { values } = parseArgs({
      args: rest,
      options: { name: { type: 'string' }, 'admin-email': { type: 'string' }, ttl: { type: 'string' } },
    });
    if (!values.name?.trim()) throw new Error('--name is required');
    if (!values['admin-email'] || !/^[^@\s]+@[^@\s.]+(?:\.[^@\s.]+)+$/.test(values['admin-email']))
      throw new Error('--admin-email must be an e-mail address');
    const ttlSeconds = parseTtl(values.ttl); // every argument is checked before anything is written
    // Fail on a missing signing key before writing anything (with an external issuer there is no key: the
    // tenant is created and its admin gets tokens from that issuer).
    const issuer = process.env.ISSUER_KEY_FILE || process.env.ISSUER_KMS_KEY_ID ? await configuredIssuer() : undefined;
    const { tenant, admin } = await createTenant(async (tenantId) => ({ tenantId, db }), {
      name: values.name.trim(),
      adminEmail: values['admin-email'],
    });
    if (!issuer) return { tenant_uuid: tenant.uuid, user_uuid: admin.uuid, token: null };
    const { token } = await issuer.sign({ tenantId: tenant.uuid, userId: admin.uuid, ttlSeconds, scope: roleScopes('admin').join(' ') });
    return { tenant_uuid: tenant.uuid, user_uuid: admin.uuid, token };
  }
  if (command === 'issue-token') {
    const { values } = parseArgs({
      args: rest,
      options: { tenant: { type: 'string' }, user: { type: 'string' }, 'service-account': { type: 'string' }, ttl: { type: 'string' } },
    });
    if (!values.tenant || !UUID_RE.test(values.tenant)) throw new Error('--tenant <tenant_uuid> is required');
    const accountUuid = values['service-account'];
    if (!values.user === !accountUuid) throw new Error('give one of --user <user_uuid> or --service-account <account_uuid>');
    if (values.user && !UUID_RE.test(values.user)) throw new Error('--user <user_uuid> must be a uuid');
    if (accountUuid && !UUID_RE.test(accountUuid)) throw new Error('--service-account <account_uuid> must be a uuid');
    const ttl = parseTtl(values.ttl);
    const issuer = await configuredIssuer();
    if (accountUuid) {
      // A long-lived token of a service account, for a client that takes only a fixed bearer token (an identity
      // provider's SCIM connection: Okta's "HTTP Header", Entra ID's "Secret Token"). The account is read on
      // every call, so disabling or deleting it stops this token at once, as it stops its 900 s tokens.
      const account = await getEntity({ tenantId: values.tenant, db }, serviceAccountEntity, accountUuid);
      if (!account) throw new Error(`No service account ${accountUuid} in tenant ${values.tenant}`);
      if (account.record.status !== 'active') throw new Error(`Service account ${accountUuid} is ${account.record.status}`);
      // a token signed in its rotation's own second would be refused (its iat is whole seconds): wait that second out
      await sleep(tokenIssuableInMs(account.record, Date.now()));
      const { token, expiresAt } = await issuer.sign({
        tenantId: values.tenant,
        userId: accountUuid,
        ttlSeconds: ttl,
        scope: account.record.scopes.join(' '),
        clientId: account.record.client_id,
      });
      return { token, expires_at: expiresAt, scope: account.record.scopes.join(' ') };
    }
    const user = await getEntity({ tenantId: values.tenant, db }, userEntity, values.user!);
    if (!user) throw new Error(`No user ${values.user} in tenant ${values.tenant}`);
    // the scopes the user's role allows now (contract section 17): a later role change needs a new token for new scopes
    const scope = roleScopes(user.record.role).join(' ');
    const { token, expiresAt } = await issuer.sign({ tenantId: values.tenant, userId: values.user!, ttlSeconds: ttl, scope });
    return { token, expires_at: expiresAt };
  }
  if (command === 'redrive') {
    // Local stack: the dead-letter store in DATA_DIR. Deployed: SQS redrives each dead-letter queue itself
    // (StartMessageMoveTask, or the console's "Start DLQ redrive"); see docs/deploy.md.
    if (!process.env.DYNAMODB_ENDPOINT)
      throw new Error('redrive works on the local stack; for a deployed stack use SQS DLQ redrive (docs/deploy.md)');
    const { redriveLocal } = await import('./redrive.ts');
    return redriveLocal(process.env.DATA_DIR ?? '.data');
  }
  if (command === 'rebuild-read-models') {
    // Builds the goal read models (composite lists, counters) for a tenant's existing goals; idempotent.
    const { tenant, concurrency } = tenantWalkArgs(rest, 2);
    const { rebuildGoalReadModels } = await import('#shared/read-models/goal-sync.ts');
    return { tenant_uuid: tenant, ...(await rebuildGoalReadModels({ tenantId: tenant, db }, { concurrency })) };
  }
  if (command === 'backfill-label-names') {
    // Names kept on goals and check-ins, and label name claims carrying the name, for data written before; idempotent.
    const { tenant, concurrency } = tenantWalkArgs(rest, 4);
    const { backfillLabelNames } = await import('#shared/stream/label-names-backfill.ts');
    return { tenant_uuid: tenant, ...(await backfillLabelNames({ tenantId: tenant, db }, { concurrency })) };
  }
  if (command === 'backfill-child-refs') {
    // Goals stored before their child_of entries were kept in their parents' partitions: moved, then the tenant marked; idempotent.
    const { tenant, concurrency } = tenantWalkArgs(rest, 4);
    const { backfillChildRefs } = await import('#shared/domain/goals/child-refs.ts');
    return { tenant_uuid: tenant, ...(await backfillChildRefs({ tenantId: tenant, db }, { concurrency })) };
  }
  if (command === 'reshard-checkin-lists') {
    // Check-ins written under the 16 old list shards: moved to the current 2, then the tenant marked; idempotent.
    const { tenant, concurrency } = tenantWalkArgs(rest, 4);
    const { reshardCheckinLists } = await import('#shared/domain/checkins/list-shards.ts');
    return { tenant_uuid: tenant, ...(await reshardCheckinLists({ tenantId: tenant, db }, { concurrency })) };
  }
  if (command === 'set-limits') return setLimits(db, rest);
  if (command === 'import') return runImportCommand(rest, db);
  throw new Error(
    `Unknown command ${command ?? ''}. Commands: create-tenant --name <name> --admin-email <email>; issue-token --tenant <uuid> (--user <uuid> | --service-account <uuid>) [--ttl <seconds>]; set-limits --tenant <uuid> (--rps <n> [--burst <n>] [--user-rps <n>] [--user-burst <n>] | --reset); redrive; import FILE --tenant <uuid> [--user <uuid>]; rebuild-read-models --tenant <uuid> [--concurrency <n>]; backfill-label-names --tenant <uuid> [--concurrency <n>]; backfill-child-refs --tenant <uuid> [--concurrency <n>]; reshard-checkin-lists --tenant <uuid> [--concurrency <n>]`,
  );
}

/** `--tenant <uuid> [--concurrency N]` of the commands that walk a tenant's goals (rebuild, backfill). */
function tenantWalkArgs(args: string[], defaultConcurrency: number): { tenant: string; concurrency: number } {
  const { values } = parseArgs({ args, options: { tenant: { type: 'string' }, concurrency: { type: 'string' } } });
  if (!values.tenant || !UUID_RE.test(values.tenant)) throw new Error('--tenant <tenant_uuid> is required');
  const concurrency = Number(values.concurrency ?? defaultConcurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64)
    throw new Error('--concurrency must be a whole number from 1 to 64');
  return { tenant: values.tenant, concurrency };
}
