import { describe, expect, it } from 'vitest';
import { decided } from '#shared/decision.ts';
import {
  decideActiveAdmins,
  isActiveAdmin,
  LastAdminError,
  lastAdminField,
  mayMoveAdmins,
  movesAdmins,
} from '#shared/domain/users/decide.ts';
import { user } from './directory.fixture.ts';

const admin = (uuid: string) => user(uuid, { role: 'admin' });

describe('a tenant always keeps an active admin (contract section 19)', () => {
  it('is an active admin only with both the admin role and the active status', () => {
    expect(isActiveAdmin(admin('a'))).toBe(true);
    expect(isActiveAdmin(user('a', { role: 'admin', status: 'inactive' }))).toBe(false);
    expect(isActiveAdmin(user('a', { role: 'member' }))).toBe(false);
  });

  it('reads the admins for an update that sends a role or a status, and moves them only when standing changes', () => {
    expect(mayMoveAdmins({ display_name: 'x' })).toBe(false);
    expect(mayMoveAdmins({ role: 'admin' })).toBe(true);
    expect(mayMoveAdmins({ status: 'active' })).toBe(true);
    expect(movesAdmins(admin('a'), { role: 'admin', status: 'active' })).toBe(false);
    expect(movesAdmins(admin('a'), { role: 'viewer' })).toBe(true);
    expect(movesAdmins(admin('a'), { status: 'inactive' })).toBe(true);
    expect(movesAdmins(user('m'), { status: 'inactive' })).toBe(false);
    expect(movesAdmins(user('m', { role: 'admin', status: 'inactive' }), { status: 'active' })).toBe(true);
    expect(movesAdmins(user('m', { role: 'admin', status: 'inactive' }), { role: 'member', status: 'active' })).toBe(false);
  });

  it('refuses taking away the last active admin with 409 last_admin, naming what the change touched', () => {
    for (const [after, field] of [
      [user('a', { role: 'member' }), 'role'],
      [user('a', { role: 'admin', status: 'inactive' }), 'status'],
    ] as const) {
      const d = decideActiveAdmins(['a'], admin('a'), after, field);
      expect('error' in d && d.error).toBeInstanceOf(LastAdminError);
      const e = (d as { error: LastAdminError }).error;
      expect([e.status, e.code, e.details[0]?.field, e.details[0]?.code]).toEqual([409, 'last_admin', field, 'last_admin']);
    }
    // a list that does not name the user (built before it was made an admin) holds no other: still refused
    expect('error' in decideActiveAdmins([], admin('a'), user('a', { role: 'member' }), 'role')).toBe(true);
    expect(lastAdminField({ status: 'inactive', role: 'member' })).toBe('status');
    expect(lastAdminField({ role: 'viewer' })).toBe('role');
  });

  it('removes an admin while another is left, adds a new or returning one, and leaves the list alone otherwise', () => {
    expect(decided(decideActiveAdmins(['a', 'b'], admin('a'), user('a', { role: 'member' }), 'role'))).toEqual(['b']);
    expect(decided(decideActiveAdmins(['b'], undefined, admin('a'), 'role'))).toEqual(['a', 'b']);
    expect(decided(decideActiveAdmins(['b'], user('a', { role: 'admin', status: 'inactive' }), admin('a'), 'status'))).toEqual(['a', 'b']);
    expect(decided(decideActiveAdmins(['a'], admin('a'), { ...admin('a'), display_name: 'Boss' }, 'role'))).toBeUndefined();
    expect(decided(decideActiveAdmins(['a'], undefined, user('m'), 'role'))).toBeUndefined();
    expect(decided(decideActiveAdmins(['a'], user('m'), user('m', { role: 'viewer' }), 'role'))).toBeUndefined();
  });
});
