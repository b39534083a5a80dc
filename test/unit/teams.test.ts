import { describe, expect, it } from 'vitest';
import { decided } from '#shared/decision.ts';
import {
  decideDeleteTeam,
  dependentsRefusal,
  fitsRefusal,
  teamCreateRefusal,
  decideCreateTeam,
  decideUpdateTeam,
  detachSubTeams,
  MAX_DEPENDENTS_NAMED,
  MAX_TX_ITEMS,
  planTeamUpdate,
  shiftDepths,
} from '#shared/domain/teams/decide.ts';
import type { TeamRecord } from '#shared/domain/teams/entity.ts';
import { ForbiddenError, HasDependentsError } from '#shared/errors.ts';
import { callerAs, LATER, NOW, refusal } from './directory.fixture.ts';

const admin = callerAs('admin');
const owner = callerAs('member', 'owner-1');
const viewerOwner = callerAs('viewer', 'owner-1');
const users = new Set(['owner-1', 'm-1']);

const team = (uuid: string, over: Partial<TeamRecord> = {}): TeamRecord => ({
  uuid,
  name: uuid,
  display_name: uuid,
  parent_uuid: null,
  owner_uuids: ['owner-1'],
  member_uuids: [],
  status: 'active',
  is_org: false,
  depth: 0,
  creator_uuid: null,
  created_at: NOW,
  updated_at: NOW,
  ...over,
});

describe('team decisions', () => {
  it('creates (admins only) at the depth under its parent, users de-duplicated and checked', () => {
    const t = decided(
      decideCreateTeam(
        admin,
        { name: 'Ops', parent_uuid: 'p', owner_uuids: ['owner-1', 'owner-1'], member_uuids: ['m-1'] },
        { users, parent: team('p', { depth: 2 }) },
        NOW,
        't-1',
      ),
    );
    expect(t).toMatchObject({
      uuid: 't-1',
      display_name: 'Ops',
      parent_uuid: 'p',
      depth: 3,
      owner_uuids: ['owner-1'],
      member_uuids: ['m-1'],
      status: 'active',
      creator_uuid: admin.userId,
    });
    expect(teamCreateRefusal(owner)).toBeInstanceOf(ForbiddenError); // the create's precheck
    expect(teamCreateRefusal(admin)).toBeUndefined();
    expect(refusal(() => decideCreateTeam(admin, { name: 'x', parent_uuid: 'p' }, { users }, NOW, 'x')).details[0]).toMatchObject({
      field: 'parent_uuid',
      code: 'not_found',
    });
    expect(
      refusal(() => decideCreateTeam(admin, { name: 'x', owner_uuids: ['ghost'], member_uuids: ['m-1', 'ghost2'] }, { users }, NOW, 'x'))
        .details,
    ).toEqual([
      expect.objectContaining({ field: 'owner_uuids', code: 'not_found', message: 'ghost is not a user of this tenant' }),
      expect.objectContaining({ field: 'member_uuids', code: 'not_found', message: 'ghost2 is not a user of this tenant' }),
    ]);
  });

  it('lets an owner (not a viewer) update but not move; re-sending the parent is not a move', () => {
    const t = team('t', { parent_uuid: 'p', depth: 1 });
    expect(decided(planTeamUpdate(owner, t, { name: 'x', parent_uuid: 'p' }))).toEqual({ moving: false, parent: null });
    expect(() => decided(planTeamUpdate(owner, t, { parent_uuid: null }))).toThrow('Only admins can move a team to another parent');
    expect(() => decided(planTeamUpdate(viewerOwner, t, { name: 'x' }))).toThrow('Viewers cannot change teams');
    expect(() => decided(planTeamUpdate(callerAs('member'), t, { name: 'x' }))).toThrow(
      'Only admins and owners of this team can update it',
    );
    expect(decided(planTeamUpdate(admin, t, { parent_uuid: null }))).toEqual({ moving: true, parent: null });
  });

  it('moves under a new parent at its depth, refusing itself and its own sub-teams', () => {
    const a = team('a', { depth: 0 });
    const moved = decided(
      decideUpdateTeam(
        admin,
        a,
        { parent_uuid: 'x' },
        {
          users,
          parentChain: [team('x', { depth: 1, parent_uuid: 'r' }), team('r')],
          below: { items: [team('a1', { parent_uuid: 'a', depth: 1 })] },
        },
        LATER,
      ),
    );
    expect(moved.team).toMatchObject({ parent_uuid: 'x', depth: 2, updated_at: LATER });
    expect(moved.below.map((t) => [t.uuid, t.depth])).toEqual([['a1', 3]]); // the subtree moves with it
    expect(
      refusal(() =>
        decideUpdateTeam(
          admin,
          a,
          { parent_uuid: 'x' },
          { users, parentChain: [team('x', { depth: 1 })], below: { overflow: true } },
          LATER,
        ),
      ).details[0],
    ).toMatchObject({ field: 'parent_uuid', code: 'too_many' });
    expect(
      refusal(() => decideUpdateTeam(admin, a, { parent_uuid: 'x' }, { users, parentChain: [], chainOverflow: true }, LATER)).details[0],
    ).toMatchObject({ field: 'parent_uuid', code: 'too_many' });
    expect(refusal(() => decideUpdateTeam(admin, a, { parent_uuid: 'a' }, { users, parentChain: [] }, LATER)).details[0]).toMatchObject({
      code: 'cycle',
    });
    expect(
      refusal(() =>
        decideUpdateTeam(
          admin,
          a,
          { parent_uuid: 'c' },
          { users, parentChain: [team('c', { parent_uuid: 'b' }), team('b', { parent_uuid: 'a' }), a] },
          LATER,
        ),
      ).details[0],
    ).toMatchObject({ code: 'cycle' });
    expect(
      decided(
        decideUpdateTeam(
          admin,
          team('b', { parent_uuid: 'a', depth: 1 }),
          { parent_uuid: null },
          { users, parentChain: [], below: { items: [] } },
          LATER,
        ),
      ).team.depth,
    ).toBe(0);
    expect(shiftDepths([team('c', { depth: 2 }), team('d', { depth: 3 })], -1, LATER).map((t) => [t.depth, t.updated_at])).toEqual([
      [1, LATER],
      [2, LATER],
    ]);
    expect(shiftDepths([team('c', { depth: 2 })], 0, LATER)).toEqual([]);
  });

  it('refuses a delete while active sub-teams or goals depend on the team, naming a bounded number', () => {
    expect(dependentsRefusal({ subTeams: [{ uuid: 's', status: 'archived' }], goals: [] })).toBeUndefined();
    const err = refusal(() =>
      dependentsRefusal({
        subTeams: Array.from({ length: 12 }, (_, i) => ({ uuid: `s${i}`, status: 'active' })),
        goals: [{ kind: 'objective', uuid: 'g1' }],
      }),
    );
    expect(err).toBeInstanceOf(HasDependentsError);
    expect(err.details.filter((d) => d.code === 'active_sub_team')).toHaveLength(MAX_DEPENDENTS_NAMED);
    expect(err.details.at(-1)).toEqual({ field: 'goals', code: 'okr_relationship', message: 'objective g1' });
    expect(
      refusal(() =>
        dependentsRefusal({
          subTeams: Array.from({ length: MAX_TX_ITEMS + 1 }, (_, i) => ({ uuid: `s${i}`, status: 'archived' })),
          goals: [],
        }),
      ).details[0]!.code,
    ).toBe('too_many');
  });

  it('detaches archived sub-teams as root teams, their subtrees moving up with them; an active one refuses', () => {
    const s = team('s', { parent_uuid: 'doomed', depth: 2, status: 'archived' });
    const below = new Map([['s', [team('s1', { parent_uuid: 's', depth: 3 }), team('s2', { parent_uuid: 's1', depth: 4 })]]]);
    expect(decided(detachSubTeams([s], below, LATER)).map((t) => [t.uuid, t.parent_uuid, t.depth])).toEqual([
      ['s', null, 0],
      ['s1', 's', 1],
      ['s2', 's1', 2],
    ]);
    expect(refusal(() => detachSubTeams([team('live', { status: 'active' })], new Map(), LATER))).toBeInstanceOf(HasDependentsError);
    // the whole delete, as read: 403 first, then dependents, then the records, then the size
    expect(refusal(() => decideDeleteTeam(owner, {}, LATER))).toBeInstanceOf(ForbiddenError);
    expect(
      refusal(() => decideDeleteTeam(admin, { found: { subTeams: [{ uuid: 'x', status: 'active' }], goals: [] } }, LATER)),
    ).toBeInstanceOf(HasDependentsError);
    expect(
      refusal(() => decideDeleteTeam(admin, { found: { subTeams: [], goals: [] }, subTeams: [team('live', { status: 'active' })] }, LATER)),
    ).toBeInstanceOf(HasDependentsError);
    expect(
      refusal(() => decideDeleteTeam(admin, { found: { subTeams: [], goals: [] }, subTeams: [s], below: { overflow: true } }, LATER))
        .details[0]!.code,
    ).toBe('too_many');
    expect(
      decided(
        decideDeleteTeam(
          admin,
          { found: { subTeams: [{ uuid: 's', status: 'archived' }], goals: [] }, subTeams: [s], below: { items: [...below] } },
          LATER,
        ),
      ).map((t) => t.uuid),
    ).toEqual(['s', 's1', 's2']);
  });

  it('refuses a change past the transaction limit', () => {
    expect(fitsRefusal(MAX_TX_ITEMS, 'member_uuids')).toBeUndefined();
    expect(refusal(() => fitsRefusal(MAX_TX_ITEMS + 1, 'member_uuids')).details[0]).toMatchObject({
      field: 'member_uuids',
      code: 'too_many',
    });
  });
});
