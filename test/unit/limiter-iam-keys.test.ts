import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LIMITER_ACTIONS, limiterKeys, limiterLeaseLeadingKeys, writeTenantLimits } from '#shared/db/rate-limit-store.ts';
import { TENANT_TAG_VARIABLE } from '#shared/db/tenant-scope.ts';
import { CredentialBudget } from '#shared/http/credential-budget.ts';
import { RateLimiter } from '#shared/http/rate-limit.ts';
import { conditionHolds } from '../support/iam.ts';
import { limiterCalls, recordingDb, type DbCall } from '../support/limiter-calls.ts';

/** The read role's limiter statement condition, for the session tagged with `tag` (as infra/constructs/tenant-data.ts builds it). */
const readRoleAllowsUpdate = (tag: string | undefined, pk: string) =>
  conditionHolds(
    { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': limiterLeaseLeadingKeys(TENANT_TAG_VARIABLE) } },
    { 'dynamodb:LeadingKeys': [pk], 'aws:PrincipalTag/tenant': tag },
  );

describe('the read role’s limiter grant against the keys the limiter actually uses', () => {
  it('admits every write a lease makes, for the tagged tenant only, and never the tenant’s config item', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uuid(),
        fc.uuid(),
        fc.array(fc.uuid(), { minLength: 1, maxLength: 3 }),
        fc.array(fc.double({ min: 0, max: 0.999, noNaN: true }), { minLength: 8, maxLength: 8 }),
        async (tenant, other, users, randoms) => {
          fc.pre(tenant !== other);
          const calls = await limiterCalls(tenant, users, randoms);
          const writes = calls.filter((c) => c.action !== 'dynamodb:GetItem');
          expect(writes.length).toBeGreaterThanOrEqual(users.length * 4 * 2); // the user's and the tenant's bucket on every take
          for (const w of writes) {
            expect(LIMITER_ACTIONS as readonly string[], w.pk).toContain(w.action);
            expect(readRoleAllowsUpdate(tenant, w.pk), w.pk).toBe(true);
            expect(readRoleAllowsUpdate(other, w.pk), `${w.pk} with another tenant's tag`).toBe(false);
            expect(readRoleAllowsUpdate(undefined, w.pk), `${w.pk} untagged`).toBe(false);
          }
          // What the limiter reads is the config item; the read role may not update it.
          const reads = calls.filter((c) => c.action === 'dynamodb:GetItem').map((c) => c.pk);
          expect(new Set(reads)).toEqual(new Set([limiterKeys.config(tenant).PK]));
          for (const pk of reads) expect(readRoleAllowsUpdate(tenant, pk), pk).toBe(false);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('does not match the config item the operator command writes', async () => {
    const tenant = '00000000-0000-4000-8000-000000000001';
    const calls: DbCall[] = [];
    await writeTenantLimits(recordingDb(calls), 't', tenant, { rps: 1 });
    expect(calls).toEqual([{ action: 'dynamodb:PutItem', pk: `T#${tenant}#rl#config` }]);
    expect(readRoleAllowsUpdate(tenant, calls[0]!.pk)).toBe(false);
    expect(readRoleAllowsUpdate(tenant, `T#${tenant}#rl#tenant#0`)).toBe(true);
    expect(readRoleAllowsUpdate(tenant, `T#${tenant}#rl#user#${tenant}#3`)).toBe(true);
  });

  it('admits the failed-credential budget`s writes (the token endpoint is a read row), for the tenant named only', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uuid(), fc.uuid(), fc.array(fc.uuid(), { minLength: 1, maxLength: 3 }), async (tenant, other, clients) => {
        fc.pre(tenant !== other);
        const calls: DbCall[] = [];
        const db = recordingDb(calls);
        let t = 1_000_000;
        const budget = new CredentialBudget({
          limiter: new RateLimiter({ db: async () => db, tableName: () => 't', defaults: () => ({ rps: 0, burst: 1 }), now: () => t }),
          limits: () => ({ client: { rps: 1, burst: 10 }, tenant: { rps: 1, burst: 10 } }),
          now: () => t,
        });
        for (const c of clients) {
          for (const client of [`sa_${c}`, `ds_${c}`]) {
            await budget.failed({ tenantId: tenant, client });
            t += 2_000;
          }
        }
        expect(calls.length).toBeGreaterThanOrEqual(clients.length * 2 * 2);
        for (const w of calls) {
          expect(w.action).toBe('dynamodb:UpdateItem');
          expect(readRoleAllowsUpdate(tenant, w.pk), w.pk).toBe(true);
          expect(readRoleAllowsUpdate(other, w.pk), `${w.pk} with another tenant's tag`).toBe(false);
          expect(readRoleAllowsUpdate(undefined, w.pk), `${w.pk} untagged`).toBe(false);
        }
      }),
      { numRuns: 30 },
    );
    expect(readRoleAllowsUpdate('00000000-0000-4000-8000-000000000001', 'T#00000000-0000-4000-8000-000000000001#rl#config')).toBe(false);
  });
});
