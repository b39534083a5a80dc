import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { decided } from '#shared/decision.ts';
import {
  applyUserUpdate,
  changesManager,
  decideCreateUser,
  decideUpdateUser,
  managerChainRefusal,
  MAX_MANAGER_CHAIN,
  updateNeedsExistenceProbe,
  updateRefusal,
  userCreateRefusal,
} from '#shared/domain/users/decide.ts';
import { ForbiddenError, NotFoundError } from '#shared/errors.ts';
import { callerAs, LATER, NOW, user, codeOf } from './directory.fixture.ts';

const admin = callerAs('admin');
const member = callerAs('member');
const viewer = callerAs('viewer');

describe('user decisions', () => {
  it('creates (admins only) with defaults, dropping empty profile values; the manager must exist', () => {
    const u = decided(
      decideCreateUser(
        admin,
        { email: ' Ann@Example.test ', profile_attributes: { job_title: 'CTO', about: null } },
        undefined,
        NOW,
        'u-1',
      ),
    );
    expect(u).toMatchObject({
      uuid: 'u-1',
      email: 'Ann@Example.test',
      display_name: 'Ann',
      role: 'member',
      status: 'active',
      manager_uuid: null,
      creator_uuid: admin.userId,
      profile_attributes: { job_title: 'CTO' },
      created_at: NOW,
    });
    expect(userCreateRefusal(member)).toBeInstanceOf(ForbiddenError); // the create's precheck
    expect(userCreateRefusal(admin)).toBeUndefined();
    expect(codeOf(() => decideCreateUser(admin, { email: 'x@example.test', manager_uuid: 'm-404' }, undefined, NOW, 'u-2'))).toBe(
      'not_found',
    );
    expect(decided(decideCreateUser(admin, { email: 'x@example.test', manager_uuid: 'm-1' }, user('m-1'), NOW, 'u-2')).manager_uuid).toBe(
      'm-1',
    );
  });

  it('lets a member change its own profile only; others learn only whether the user exists', () => {
    expect(updateRefusal(member, member.userId, { display_name: 'Me' })).toBeUndefined();
    expect(updateNeedsExistenceProbe(member, member.userId)).toBe(false);
    expect(updateRefusal(member, member.userId, { role: 'admin', manager_uuid: 'x' })?.message).toMatch(/role, manager_uuid/);
    expect(updateNeedsExistenceProbe(member, 'someone')).toBe(true);
    expect(updateRefusal(member, 'someone', { display_name: 'x' }, { exists: true })).toBeInstanceOf(ForbiddenError);
    expect(updateRefusal(member, 'someone', { display_name: 'x' }, { exists: false })).toBeInstanceOf(NotFoundError);
    expect(updateNeedsExistenceProbe(viewer, viewer.userId)).toBe(true);
    expect(updateRefusal(viewer, viewer.userId, { display_name: 'x' }, { exists: true })?.message).toBe(
      'Viewers cannot change their profile',
    );
    expect(updateNeedsExistenceProbe(admin, 'anyone')).toBe(false);
  });

  it('keeps an admin from locking itself out', () => {
    expect(codeOf(() => updateRefusal(admin, admin.userId, { role: 'member' }))).toBe('self_lockout');
    expect(codeOf(() => updateRefusal(admin, admin.userId, { status: 'inactive' }))).toBe('self_lockout');
    expect(codeOf(() => updateRefusal(admin, admin.userId, { role: 'admin', status: 'active' }))).toBe('ok');
    expect(codeOf(() => updateRefusal(admin, 'other', { role: 'viewer', status: 'inactive' }))).toBe('ok');
  });

  it('refuses a manager chain that leads back to the user, an unknown manager, and an overlong chain', () => {
    const chain = [user('m-1', { manager_uuid: 'm-2' }), user('m-2', { manager_uuid: 'u' })];
    expect(codeOf(() => managerChainRefusal('u', 'u', []))).toBe('cycle');
    expect(codeOf(() => managerChainRefusal('u', 'm-1', chain))).toBe('cycle');
    expect(codeOf(() => managerChainRefusal('u', 'm-1', [user('m-1', { manager_uuid: 'm-2' }), user('m-2')]))).toBe('ok');
    expect(codeOf(() => managerChainRefusal('u', 'm-1', []))).toBe('not_found');
    const long = Array.from({ length: MAX_MANAGER_CHAIN + 1 }, (_, i) => user(`m-${i}`, { manager_uuid: `m-${i + 1}` }));
    expect(codeOf(() => managerChainRefusal('u', 'm-0', long))).toBe('too_many');
  });

  it('reads the manager chain only when the manager changes', () => {
    const u = user('u', { manager_uuid: 'm-1' });
    expect(changesManager(u, { manager_uuid: 'm-1' })).toBe(false);
    expect(changesManager(u, { manager_uuid: null })).toBe(false);
    expect(changesManager(u, { display_name: 'x' })).toBe(false);
    expect(changesManager(u, { manager_uuid: 'm-2' })).toBe(true);
  });

  it('decides an update from what was read: the new manager’s chain judged only when the manager changes', () => {
    const u = user('u', { manager_uuid: 'm-1' });
    const cyclic = [user('m-2', { manager_uuid: 'u' })];
    expect(codeOf(() => decideUpdateUser(u, { manager_uuid: 'm-2' }, cyclic, LATER))).toBe('cycle');
    expect(codeOf(() => decideUpdateUser(u, { manager_uuid: 'm-2' }, undefined, LATER))).toBe('not_found');
    expect(decided(decideUpdateUser(u, { manager_uuid: 'm-2' }, [user('m-2')], LATER))).toMatchObject({
      manager_uuid: 'm-2',
      updated_at: LATER,
    });
    // the same manager again: no chain needed, nothing refused
    expect(decided(decideUpdateUser(u, { manager_uuid: 'm-1', display_name: 'N' }, undefined, LATER))).toMatchObject({
      manager_uuid: 'm-1',
      display_name: 'N',
    });
  });

  it('applies sent fields only, merging the profile and dropping cleared values', () => {
    const u = user('u', { manager_uuid: 'm-1', profile_attributes: { job_title: 'Dev', about: 'Hi' } });
    const next = applyUserUpdate(u, { display_name: 'New', manager_uuid: null, profile_attributes: { about: null, locale: 'fr' } }, LATER);
    expect(next).toEqual({
      ...u,
      display_name: 'New',
      manager_uuid: null,
      profile_attributes: { job_title: 'Dev', locale: 'fr' },
      updated_at: LATER,
    });
  });
});

describe('the user record schema (OpenAPI, MCP output schemas)', () => {
  it('takes the profile keys that are set, any subset of the named ones, and no other key', async () => {
    const { UserRecordSchema } = await import('#shared/schemas/users.ts');
    const { presentUser } = await import('#shared/presenters/directory.ts');
    const profile = UserRecordSchema.shape.profile_attributes;
    const wire = presentUser(user('u-1', { profile_attributes: { first_name: 'Ann', job_title: null } }));
    expect(UserRecordSchema.safeParse(wire).success).toBe(true);
    expect(profile.safeParse({}).success).toBe(true);
    expect(profile.safeParse({ favourite_colour: 'red' }).success).toBe(false);
    // the JSON Schema the MCP tools publish: named keys, none required
    const json = z.toJSONSchema(profile) as { required?: string[]; propertyNames?: { enum: string[] } };
    expect(json.required).toBeUndefined();
    expect(json.propertyNames?.enum).toEqual(expect.arrayContaining(['first_name', 'department_name']));
  });
});
