import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { keys } from '#shared/db/keys.ts';
import { TABLE_DEFINITION } from '#shared/db/table.ts';
import { limiterKeys } from '#shared/db/rate-limit-store.ts';
import { ITEM_WRITE_ACTIONS } from '#shared/db/table-access.ts';
import { TENANT_TAG, tenantAssumeRoleInput, tenantSessionPolicy } from '#shared/db/tenant-scope.ts';
import { conditionHolds, like, policyAllows, type PolicyStatement, type RequestContext } from '../support/iam.ts';
import { TABLE_ACTIONS } from '../../infra/constructs/tenant-data.ts';
import { asArray, build, logicalId, mergedTemplate, roleStatements, type Statement } from './stack.fixture.ts';

const TABLE_ARN = 'arn:aws:dynamodb:eu-west-1:123456789012:table/GoalTracking-DataTable-ABC';
const INDEX_ARNS = TABLE_DEFINITION.globalSecondaryIndexes.map((g) => `${TABLE_ARN}/index/${g.indexName}`);

/**
 * What a policy allows a session tagged `tag` (the tenant tag tenant-scope.ts sets; the session policy's own
 * statements do not use it): actions and resources of Allow statements, and the leading keys they require.
 */
const allows = (policy: { Statement: Statement[] }, action: string, resource: string, leadingKeys: string[], tag?: string) =>
  policyAllows(policy.Statement as PolicyStatement[], {
    action,
    resource,
    context: { 'dynamodb:LeadingKeys': leadingKeys, 'aws:PrincipalTag/tenant': tag },
  });

/**
 * What a session of a tenant role may do, Deny statements included (test/support/iam.ts reads Allows only): an
 * Allow of the role and of the session policy, and no Deny of the role matching (an explicit Deny wins).
 */
const sessionMay = (role: { Statement: Statement[] }, session: { Statement: Statement[] }, action: string, pk: string, tag: string) => {
  const context: RequestContext = { 'dynamodb:LeadingKeys': [pk], 'aws:PrincipalTag/tenant': tag };
  const denied = (role.Statement as PolicyStatement[]).some(
    (s) =>
      s.Effect === 'Deny' &&
      asArray(s.Action).some((a) => like(a as string, action)) &&
      asArray(s.Resource).some((r) => typeof r === 'string' && like(r, TABLE_ARN)) &&
      conditionHolds(s.Condition, context),
  );
  return !denied && allows(role, action, TABLE_ARN, [pk], tag) && allows(session, action, TABLE_ARN, [pk]);
};

const uuid = fc.uuid();
/** Keys of every family a tenant's items and index entries use (keys.ts). */
const keysOf = (t: string, id: string) => [
  keys.entity(t, 'goal', id).PK,
  keys.entityList(t, 'goal'),
  keys.entry(t, 'goal', id, 'owner', id).PK,
  keys.entryList(t, 'objective', 'team', id),
  keys.unique(t, 'email', 'a@b.c').PK,
  keys.misc(t, 'counter', id).PK,
];

describe('tenant-scoped data access', () => {
  it('the session policy a function assumes for tenant A names only A’s keys, on the table and every index', () => {
    fc.assert(
      fc.property(uuid, uuid, uuid, (a, b, id) => {
        fc.pre(a !== b);
        const policy = tenantSessionPolicy(TABLE_ARN, a) as { Statement: Statement[] };
        for (const s of policy.Statement) {
          expect(s.Effect).toBe('Allow');
          expect(s.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [keys.leadingKeysPattern(a)] } });
        }
        for (const resource of [TABLE_ARN, ...INDEX_ARNS]) {
          for (const action of TABLE_ACTIONS.write) {
            // A's keys: allowed on the table and on every index.
            expect(allows(policy, action, resource, keysOf(a, id))).toBe(true);
            // B's keys, or a request mixing A's and B's (BatchGetItem), never.
            expect(allows(policy, action, resource, keysOf(b, id))).toBe(false);
            expect(allows(policy, action, resource, [...keysOf(a, id), keysOf(b, id)[0]!])).toBe(false);
          }
        }
        // Nothing outside the table: another table, Scan, table management.
        expect(allows(policy, 'dynamodb:GetItem', TABLE_ARN.replace('ABC', 'OTHER'), keysOf(a, id))).toBe(false);
        expect(allows(policy, 'dynamodb:Scan', TABLE_ARN, keysOf(a, id))).toBe(false);
        expect(allows(policy, 'dynamodb:DeleteTable', TABLE_ARN, keysOf(a, id))).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('does not let a tenant id that is a prefix of another reach the other (the prefix ends with #)', () => {
    const a = '00000000-0000-4000-8000-000000000001';
    const policy = tenantSessionPolicy(TABLE_ARN, a) as { Statement: Statement[] };
    expect(allows(policy, 'dynamodb:GetItem', TABLE_ARN, [keys.entity(a, 'goal', '1').PK])).toBe(true);
    expect(allows(policy, 'dynamodb:GetItem', TABLE_ARN, [keys.entity(`${a}0`, 'goal', '1').PK])).toBe(false);
    expect(allows(policy, 'dynamodb:GetItem', TABLE_ARN, [`T#${a}`])).toBe(false);
  });

  it('refuses tenant ids that are not uuids, so wildcards from a token can never widen the pattern', () => {
    for (const bad of ['*', 'acme', '?', '${aws:username}', '00000000-0000-4000-8000-00000000000*'])
      expect(() => tenantSessionPolicy(TABLE_ARN, bad)).toThrow(/uuid/);
  });

  it('assumes the tenant role with the tenant tag (what the role confines to) and the session policy, and refuses a non-uuid before any call', () => {
    const a = 'a3bb189e-8bf9-3888-9912-ace4e6543002';
    const input = tenantAssumeRoleInput('arn:aws:iam::123456789012:role/TenantRead', TABLE_ARN, a);
    expect(input.Tags).toEqual([{ Key: TENANT_TAG, Value: a }]);
    expect(input.TransitiveTagKeys).toBeUndefined(); // the trust policy refuses transitive tags
    expect(JSON.parse(input.Policy!)).toEqual(tenantSessionPolicy(TABLE_ARN, a));
    for (const bad of ['*', 'acme', '', '${aws:username}', `${a}#`])
      expect(() => tenantAssumeRoleInput('arn:aws:iam::123456789012:role/TenantRead', TABLE_ARN, bad)).toThrow(/uuid/);
  });

  describe('intersected with the tenant roles of the stack', () => {
    let roles: Record<'read' | 'write', Statement[]>;
    beforeAll(() => {
      const { stack } = build({ routes: [], workers: [] });
      const template = mergedTemplate(stack);
      const resolve = (statements: Statement[]): Statement[] =>
        // The template's table ARN tokens → the ARN used above, so both policies speak about the same resources.
        statements.map((s) => ({
          ...s,
          Resource: asArray(s.Resource).map((r) =>
            JSON.stringify(r).includes('/index/') ? `${TABLE_ARN}${(r as any)['Fn::Join'][1][1]}` : TABLE_ARN,
          ),
        }));
      roles = {
        read: resolve(roleStatements(template, logicalId(stack.data.readRole))),
        write: resolve(roleStatements(template, logicalId(stack.data.writeRole))),
      };
    });

    it('a read function’s session can read A’s items and nothing else; a write function’s can also write them', () => {
      const a = 'a3bb189e-8bf9-3888-9912-ace4e6543002';
      const b = 'f7c1bd87-4da5-4b2f-8c4c-1d2e3f4a5b6c';
      const session = tenantSessionPolicy(TABLE_ARN, a) as { Statement: Statement[] };
      const every = [...TABLE_ACTIONS.write, 'dynamodb:Scan', 'dynamodb:DescribeTable', 'dynamodb:DeleteTable'];
      for (const access of ['read', 'write'] as const) {
        const role = { Statement: roles[access] };
        for (const resource of [TABLE_ARN, ...INDEX_ARNS]) {
          // Effective permission of an assumed-role session = role policy ∩ session policy.
          const effective = every.filter(
            (action) => allows(role, action, resource, keysOf(a, '1'), a) && allows(session, action, resource, keysOf(a, '1')),
          );
          expect(effective.sort(), `${access} on ${resource}`).toEqual([...TABLE_ACTIONS[access]].sort());
          const other = every.filter(
            (action) => allows(role, action, resource, keysOf(b, '1'), a) && allows(session, action, resource, keysOf(b, '1')),
          );
          expect(other, `${access} on ${resource}, tenant B`).toEqual([]);
        }
      }
    });

    it('a read function’s session may update its own tenant’s rate-limit items, and no other item', () => {
      const a = 'a3bb189e-8bf9-3888-9912-ace4e6543002';
      const b = 'f7c1bd87-4da5-4b2f-8c4c-1d2e3f4a5b6c';
      const session = tenantSessionPolicy(TABLE_ARN, a) as { Statement: Statement[] };
      const role = { Statement: roles.read };
      const may = (pk: string) =>
        allows(role, 'dynamodb:UpdateItem', TABLE_ARN, [pk], a) && allows(session, 'dynamodb:UpdateItem', TABLE_ARN, [pk]);
      expect(may(limiterKeys.tenantShard(a, 0).PK)).toBe(true);
      expect(may(limiterKeys.userShard(a, b, 1).PK)).toBe(true);
      expect(may(limiterKeys.tenantShard(b, 0).PK)).toBe(false);
      expect(may(limiterKeys.config(a).PK)).toBe(false); // operator-set limits: readable, not writable
      expect(allows(role, 'dynamodb:GetItem', TABLE_ARN, [limiterKeys.config(a).PK], a)).toBe(true);
      expect(may(`T#${a}#unique#label#rl#x`)).toBe(false);
      expect(may(`T#${a}#label#${b}`)).toBe(false);
      expect(allows(role, 'dynamodb:PutItem', TABLE_ARN, [limiterKeys.tenantShard(a, 0).PK], a)).toBe(false);
    });

    it('a write function’s session may not write its tenant’s operator-set limits (rl#config), only read them; its other items stay writable', () => {
      fc.assert(
        fc.property(uuid, uuid, (a, id) => {
          const session = tenantSessionPolicy(TABLE_ARN, a) as { Statement: Statement[] };
          const role = { Statement: roles.write };
          const config = limiterKeys.config(a).PK;
          for (const action of ITEM_WRITE_ACTIONS) expect(sessionMay(role, session, action, config, a), `${action} ${config}`).toBe(false);
          for (const action of ['dynamodb:GetItem', 'dynamodb:ConditionCheckItem'])
            expect(sessionMay(role, session, action, config, a), `${action} ${config}`).toBe(true);
          // everything else the write role grants is untouched: every key family, the limiter's bucket shards
          for (const pk of [...keysOf(a, id), limiterKeys.tenantShard(a, 0).PK, limiterKeys.userShard(a, id, 3).PK])
            for (const action of TABLE_ACTIONS.write) expect(sessionMay(role, session, action, pk, a), `${action} ${pk}`).toBe(true);
        }),
        { numRuns: 50 },
      );
      // A batch naming the config item among others is refused whole (LeadingKeys holds every item's key).
      const a = 'a3bb189e-8bf9-3888-9912-ace4e6543002';
      const deny = roles.write.filter((s) => s.Effect === 'Deny');
      expect(
        deny.some((s) =>
          conditionHolds((s as PolicyStatement).Condition, {
            'dynamodb:LeadingKeys': [keys.entity(a, 'goal', '1').PK, limiterKeys.config(a).PK],
          }),
        ),
      ).toBe(true);
      // The read role has no Deny to need: it is granted no write on the item at all.
      expect(roles.read.filter((s) => s.Effect === 'Deny')).toEqual([]);
      const readSession = tenantSessionPolicy(TABLE_ARN, a) as { Statement: Statement[] };
      for (const action of ITEM_WRITE_ACTIONS)
        expect(sessionMay({ Statement: roles.read }, readSession, action, limiterKeys.config(a).PK, a), action).toBe(false);
    });

    it('every action a tenant role grants is one the session policy allows (else a function would silently lack it)', () => {
      const session = tenantSessionPolicy(TABLE_ARN, '00000000-0000-4000-8000-000000000001') as { Statement: Statement[] };
      const sessionActions = session.Statement.flatMap((s) => asArray(s.Action));
      for (const access of ['read', 'write'] as const) {
        for (const action of roles[access].flatMap((s) => asArray(s.Action)))
          expect(sessionActions, `${access}: ${action}`).toContain(action);
      }
    });
  });
});
