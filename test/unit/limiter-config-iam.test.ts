import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keys } from '#shared/db/keys.ts';
import { deleteTenantLimits, limiterKeys, writeTenantLimits } from '#shared/db/rate-limit-store.ts';
import { OPERATOR_ONLY_LEADING_KEYS } from '#shared/db/table-access.ts';
import { requireTableAccess, withGrant } from '#shared/grants.ts';
import { conditionHolds } from '../support/iam.ts';
import { limiterCalls, recordingDb, type DbCall } from '../support/limiter-calls.ts';

/** The write role's Deny condition (infra/constructs/tenant-data.ts `OperatorOnlyItems`) for a request naming `pks`. */
const writeRoleDenies = (...pks: string[]) =>
  conditionHolds(
    { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': [...OPERATOR_ONLY_LEADING_KEYS] } },
    { 'dynamodb:LeadingKeys': pks },
  );

/** Whether the local stack's row grant (shared/grants.ts) refuses a PutItem of `pk` to a `write` row, as the instrumented client asks. */
const localGrantRefusesPut = (pk: string) => {
  try {
    withGrant({ name: 'POST /x', table: 'write', sendsTo: [] }, () =>
      requireTableAccess('PutItemCommand', { TableName: 't', Item: { PK: { S: pk }, SK: { S: 'RL' } } }),
    );
    return false;
  } catch (err) {
    if ((err as Error).name !== 'AccessDeniedException') throw err;
    return true;
  }
};

describe('the write role’s Deny of the operator-set limits (rl#config) against the keys the code uses', () => {
  it('matches the item the operator command writes and deletes, for any tenant, and no key a lease or another item family writes; the local grant agrees', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uuid(),
        fc.uuid(),
        fc.array(fc.double({ min: 0, max: 0.999, noNaN: true }), { minLength: 8, maxLength: 8 }),
        async (tenant, id, randoms) => {
          const calls: DbCall[] = [];
          await writeTenantLimits(recordingDb(calls), 't', tenant, { rps: 1 });
          await deleteTenantLimits(recordingDb(calls), 't', tenant);
          expect(calls.map((c) => c.action)).toEqual(['dynamodb:PutItem', 'dynamodb:DeleteItem']);
          for (const c of calls) {
            expect(c.pk).toBe(limiterKeys.config(tenant).PK);
            expect(writeRoleDenies(c.pk), c.pk).toBe(true);
            expect(localGrantRefusesPut(c.pk), c.pk).toBe(true);
          }
          const leases = (await limiterCalls(tenant, [id], randoms)).filter((c) => c.action === 'dynamodb:UpdateItem');
          expect(leases.length).toBeGreaterThan(0);
          const others = [
            ...leases.map((c) => c.pk),
            keys.entity(tenant, 'goal', id).PK,
            keys.unique(tenant, 'label', 'rl#config').PK, // a label named like the item
            keys.misc(tenant, 'rl', 'configuration').PK,
            `${limiterKeys.config(tenant).PK}#x`,
          ];
          for (const pk of others) {
            expect(writeRoleDenies(pk), pk).toBe(false);
            expect(localGrantRefusesPut(pk), pk).toBe(false);
          }
          // a request naming the item among others (a batch) is refused whole
          expect(writeRoleDenies(keys.entity(tenant, 'goal', id).PK, limiterKeys.config(tenant).PK)).toBe(true);
        },
      ),
      { numRuns: 50 },
    );
  });
});
