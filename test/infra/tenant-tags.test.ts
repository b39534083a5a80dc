import fc from 'fast-check';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { keys } from '#shared/db/keys.ts';
import { limiterKeys } from '#shared/db/rate-limit-store.ts';
import { TABLE_ACTIONS } from '../../infra/constructs/tenant-data.ts';
import type { GoalTrackingStack } from '../../infra/stack.ts';
import { policyAllows, type PolicyStatement, type RequestContext } from '../support/iam.ts';
import { limiterCalls } from '../support/limiter-calls.ts';
import { asArray, build, logicalId, mergedTemplate, refId, roleStatements, type Json } from './stack.fixture.ts';

/**
 * Tenant confinement by session tag, read from the synthesized template: the tenant roles' own policies confine
 * items to the tagged tenant, and their trust policies admit no session without the tag. Nothing here uses the
 * session policy tenant-scope.ts also passes: confinement must hold without it.
 */

const ACCOUNT = '123456789012';
const PSEUDO: Record<string, string> = {
  'AWS::Partition': 'aws',
  'AWS::AccountId': ACCOUNT,
  'AWS::Region': 'eu-west-1',
  'AWS::URLSuffix': 'amazonaws.com',
};
const TAG_VARIABLE_PREFIX = 'T#${aws:PrincipalTag/tenant}#';

/** A template value with pseudo parameters and Fn::Join resolved (what these policies use); anything else throws. */
function resolve(x: unknown): unknown {
  if (typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean') return String(x);
  if (Array.isArray(x)) return x.map(resolve);
  const j = x as Json;
  if (j && typeof j === 'object') {
    if ('Ref' in j && j.Ref in PSEUDO) return PSEUDO[j.Ref];
    if ('Fn::Join' in j) return (j['Fn::Join'][1] as unknown[]).map((p) => resolve(p) as string).join(j['Fn::Join'][0]);
    if (Object.keys(j).some((k) => k.startsWith('Fn::') || k === 'Ref')) throw new Error(`unresolvable ${JSON.stringify(j)}`);
    return Object.fromEntries(Object.entries(j).map(([k, v]) => [k, resolve(v)]));
  }
  throw new Error(`unresolvable ${JSON.stringify(x)}`);
}

const A = 'a3bb189e-8bf9-3888-9912-ace4e6543002';
const B = 'f7c1bd87-4da5-4b2f-8c4c-1d2e3f4a5b6c';

describe('tenant confinement by session tag', () => {
  let stack: GoalTrackingStack;
  let template: Template;
  let t: Json;
  const tenantRoles = () =>
    [
      ['read', stack.data.readRole],
      ['write', stack.data.writeRole],
    ] as const;

  beforeAll(() => {
    stack = build().stack;
    template = mergedTemplate(stack);
    t = template.toJSON();
  });

  it('(a) conditions every data statement of each tenant role on LeadingKeys under the tenant tag, nothing broader', () => {
    for (const [access, role] of tenantRoles()) {
      const all = roleStatements(template, logicalId(role));
      // the one Deny: the write role may not write the operator's items (rl#config; stack.test.ts checks its shape)
      expect(
        all.filter((s) => s.Effect === 'Deny').map((s) => s.Sid),
        access,
      ).toEqual(access === 'write' ? ['OperatorOnlyItems'] : []);
      const statements = all.filter((s) => s.Effect !== 'Deny');
      expect(statements.length, access).toBeGreaterThan(0);
      for (const s of statements) {
        expect(s.Effect).toBe('Allow');
        expect(
          asArray(s.Action).every((a) => a.startsWith('dynamodb:')),
          `${access} ${s.Sid}`,
        ).toBe(true);
        // Exactly one condition: every leading key under the tag's tenant prefix (which ends with `#`, so no
        // tenant id that extends another's matches; a tag value cannot hold `#`, `*` or `?`).
        expect(Object.keys(s.Condition ?? {}), `${access} ${s.Sid}`).toEqual(['ForAllValues:StringLike']);
        expect(Object.keys(s.Condition!['ForAllValues:StringLike']), `${access} ${s.Sid}`).toEqual(['dynamodb:LeadingKeys']);
        const patterns = asArray<string>(s.Condition!['ForAllValues:StringLike']['dynamodb:LeadingKeys']);
        expect(patterns.length).toBeGreaterThan(0);
        for (const p of patterns) expect(p.startsWith(TAG_VARIABLE_PREFIX), `${access} ${s.Sid}: ${p}`).toBe(true);
      }
      expect(statements.find((s) => s.Sid === 'TenantData')!.Condition).toEqual({
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [keys.leadingKeysPattern('${aws:PrincipalTag/tenant}')] },
      });
      // A role tag `tenant` would stand in for a missing session tag.
      expect(
        (t.Resources[logicalId(role)].Properties.Tags ?? []).map((x: Json) => String(x.Key).toLowerCase()),
        access,
      ).not.toContain('tenant');
    }
  });

  it('(a) the role policies alone (no session policy) give a session tagged A its role’s actions on A’s keys, none on B’s or untagged', () => {
    const every = [...TABLE_ACTIONS.write, 'dynamodb:Scan', 'dynamodb:DescribeTable'];
    fc.assert(
      fc.property(fc.uuid(), fc.uuid(), fc.uuid(), (a, b, id) => {
        fc.pre(a !== b);
        const tenantKeys = (x: string) => [
          keys.entity(x, 'goal', id).PK,
          keys.entryList(x, 'objective', 'team', id),
          keys.unique(x, 'email', 'a@b.c').PK,
          keys.misc(x, 'counter', id).PK,
        ];
        for (const [access, role] of tenantRoles()) {
          const statements = roleStatements(template, logicalId(role)) as PolicyStatement[];
          const allowed = (tag: string | undefined, leading: string[]) =>
            every.filter((action) =>
              policyAllows(statements, { action, context: { 'aws:PrincipalTag/tenant': tag, 'dynamodb:LeadingKeys': leading } }),
            );
          expect(allowed(a, tenantKeys(a)).sort(), access).toEqual([...TABLE_ACTIONS[access]].sort());
          expect(allowed(a, tenantKeys(b)), access).toEqual([]);
          expect(allowed(a, [...tenantKeys(a), tenantKeys(b)[0]!]), access).toEqual([]);
          expect(allowed(undefined, tenantKeys(a)), access).toEqual([]);
        }
      }),
      { numRuns: 100 },
    );
  });

  it('(b) trusts an assumption only with a well-formed tenant tag: an untagged request matches no Allow, for sts:AssumeRole or sts:TagSession', () => {
    for (const [access, role] of tenantRoles()) {
      const trust = resolve(t.Resources[logicalId(role)].Properties.AssumeRolePolicyDocument.Statement) as PolicyStatement[];
      expect(
        trust.map((s) => s.Effect),
        access,
      ).not.toContain('Deny'); // the Allow analysis below is then complete
      const path = stack.data.rolePath(access);
      const caller = `arn:aws:iam::${ACCOUNT}:role${path}GoalTracking-SomeFunctionRole-ABC`;
      const request = (extra: RequestContext): RequestContext => ({ 'aws:PrincipalArn': caller, ...extra });
      const tagged = (value: string, more: RequestContext = {}) =>
        request({ 'aws:RequestTag/tenant': value, 'aws:TagKeys': ['tenant'], ...more });
      const allows = (context: RequestContext) =>
        ['sts:AssumeRole', 'sts:TagSession'].filter((action) => policyAllows(trust, { action, context }));

      expect(allows(request({})), `${access}: untagged`).toEqual([]);
      expect(allows(tagged(A)), access).toEqual(['sts:AssumeRole', 'sts:TagSession']);
      expect(allows(request({ 'aws:TagKeys': ['tenant'] })), `${access}: tag key without its value`).toEqual([]);
      for (const bad of ['', 'acme', `${A}0`, A.slice(1), A.replace(/-/g, '_'), `${A.slice(0, 8)}#${A.slice(9)}`])
        expect(allows(tagged(bad)), `${access}: tag ${bad}`).toEqual([]);
      expect(allows(tagged(A, { 'aws:TagKeys': ['tenant', 'team'], 'aws:RequestTag/team': 'x' })), `${access}: another tag`).toEqual([]);
      expect(allows(tagged(A, { 'sts:TransitiveTagKeys': ['tenant'] })), `${access}: transitive`).toEqual([]);
      const otherPath = stack.data.rolePath(access === 'read' ? 'write' : 'read');
      expect(
        allows({ ...tagged(A), 'aws:PrincipalArn': `arn:aws:iam::${ACCOUNT}:role${otherPath}X` }),
        `${access}: from the other path`,
      ).toEqual([]);
      // The principal is this account, never anyone.
      for (const s of trust) expect(JSON.stringify(s.Principal ?? s)).toContain(`arn:aws:iam::${ACCOUNT}:root`);
    }
  });

  it('(c) the read role may update every key the limiter writes for its tagged tenant, and never a tenant’s rl#config', async () => {
    const statements = roleStatements(template, logicalId(stack.data.readRole)) as PolicyStatement[];
    const limiter = statements.filter((s) => s.Sid === 'RateLimitLeases');
    expect(limiter).toHaveLength(1);
    const mayUpdate = (tag: string | undefined, pk: string) =>
      policyAllows(statements, {
        action: 'dynamodb:UpdateItem',
        context: { 'aws:PrincipalTag/tenant': tag, 'dynamodb:LeadingKeys': [pk] },
      });
    expect(mayUpdate(A, limiterKeys.config(A).PK)).toBe(false);
    const calls = await limiterCalls(A, [B, A, '00000000-0000-4000-8000-000000000009'], [0, 0.3, 0.51, 0.77, 0.99, 0.12, 0.64, 0.88]);
    const writes = calls.filter((c) => c.action === 'dynamodb:UpdateItem');
    expect(new Set(writes.map((w) => w.pk)).size).toBeGreaterThan(4); // several shards of both buckets
    for (const w of writes) {
      expect(mayUpdate(A, w.pk), w.pk).toBe(true);
      expect(mayUpdate(B, w.pk), `${w.pk} tagged B`).toBe(false);
    }
    expect(new Set(calls.filter((c) => c.action !== 'dynamodb:UpdateItem').map((c) => c.pk))).toEqual(new Set([limiterKeys.config(A).PK])); // what it reads
    // The limiter statement alone, too (the data statement gives a read role no UpdateItem at all).
    expect(
      policyAllows(limiter, {
        action: 'dynamodb:UpdateItem',
        context: { 'aws:PrincipalTag/tenant': A, 'dynamodb:LeadingKeys': [limiterKeys.config(A).PK] },
      }),
    ).toBe(false);
    // Nor another item family a tenant could name like a limiter shard.
    expect(mayUpdate(A, keys.unique(A, 'label', 'rl#tenant#1').PK)).toBe(false);
  });

  it('(d) gives every execution role that may assume a tenant role sts:TagSession on it too', () => {
    const tenantIds = tenantRoles().map(([, r]) => logicalId(r));
    let assumers = 0;
    for (const [rid, r] of Object.entries<Json>(template.findResources('AWS::IAM::Role'))) {
      if (tenantIds.includes(rid)) continue;
      const statements = roleStatements(template, rid);
      const on = (action: string) =>
        new Set(
          statements
            .filter((s) => s.Effect === 'Allow' && asArray(s.Action).includes(action))
            .flatMap((s) => asArray(s.Resource).map(refId)),
        );
      const assume = [...on('sts:AssumeRole')].filter((x) => tenantIds.includes(x));
      const tag = on('sts:TagSession');
      for (const x of assume) expect(tag.has(x), `${rid} (${r.Properties.Path}) assumes ${x}`).toBe(true);
      if (assume.length) assumers++;
    }
    expect(assumers).toBeGreaterThan(10);
  });
});
