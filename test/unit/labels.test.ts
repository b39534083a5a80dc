import { describe, expect, it } from 'vitest';
import { decided } from '#shared/decision.ts';
import {
  canManageLabel,
  decideCreateLabel,
  decideDeleteLabel,
  decideUpdateLabel,
  MAX_LABEL_DEPTH,
  planLabelUpdate,
  labelCreateRefusal,
} from '#shared/domain/labels/decide.ts';
import { newLabelRecord, type LabelRecord } from '#shared/domain/labels/entity.ts';
import { ForbiddenError } from '#shared/errors.ts';
import { callerAs, LATER, NOW, codeOf } from './directory.fixture.ts';

const admin = callerAs('admin');
const member = callerAs('member');
const viewer = callerAs('viewer');

const label = (uuid: string, over: Partial<LabelRecord> = {}) => ({
  ...newLabelRecord({ name: uuid, creator_uuid: member.userId }, NOW, uuid),
  ...over,
});
const group = (uuid: string, parent: string | null = null) => label(uuid, { is_group: true, parent_uuid: parent });

describe('label decisions', () => {
  it('creates under a group or a nested group; the parent must be a group of the tenant', () => {
    expect(decided(decideCreateLabel(member, { name: ' Apac ', parent_uuid: 'g' }, [group('g')], NOW, 'l-1'))).toEqual({
      uuid: 'l-1',
      name: 'Apac',
      is_group: false,
      parent_uuid: 'g',
      color: null,
      creator_uuid: member.userId,
      created_at: NOW,
      updated_at: NOW,
    });
    expect(
      decided(decideCreateLabel(member, { name: 'Sub', is_group: true, parent_uuid: 'g2' }, [group('g2', 'g1'), group('g1')], NOW, 'l-2'))
        .parent_uuid,
    ).toBe('g2');
    expect(codeOf(() => decideCreateLabel(member, { name: 'x', parent_uuid: 'l' }, [label('l')], NOW, 'x'))).toBe('not_a_group');
    expect(codeOf(() => decideCreateLabel(member, { name: 'x', parent_uuid: 'nope' }, [], NOW, 'x'))).toBe('not_found');
    expect(labelCreateRefusal(viewer)).toBeInstanceOf(ForbiddenError); // the create's precheck
    expect(labelCreateRefusal(member)).toBeUndefined();
  });

  it('bounds how deep groups nest', () => {
    const chain = Array.from({ length: MAX_LABEL_DEPTH + 1 }, (_, i) => group(`g${i}`, `g${i + 1}`));
    expect(codeOf(() => decideCreateLabel(admin, { name: 'deep', parent_uuid: 'g0' }, chain, NOW, 'x'))).toBe('too_deep');
    expect(codeOf(() => decideCreateLabel(admin, { name: 'ok', parent_uuid: 'g0' }, chain.slice(0, MAX_LABEL_DEPTH), NOW, 'x'))).toBe('ok');
  });

  it('refuses a move under itself or anything below it', () => {
    const a = group('a');
    expect(codeOf(() => planLabelUpdate(admin, a, { parent_uuid: 'a' }))).toBe('cycle');
    // b is under a, c under b: a under c closes a cycle
    expect(
      codeOf(() =>
        decideUpdateLabel(admin, a, { parent_uuid: 'c' }, { hasChildren: true, parentChain: [group('c', 'b'), group('b', 'a'), a] }, LATER),
      ),
    ).toBe('cycle');
    expect(decided(decideUpdateLabel(admin, a, { parent_uuid: 'z' }, { hasChildren: true, parentChain: [group('z')] }, LATER))).toEqual({
      ...a,
      parent_uuid: 'z',
      updated_at: LATER,
    });
  });

  it('plans the reads an update needs: children only when a group turns regular, the chain only for a new parent', () => {
    expect(decided(planLabelUpdate(admin, group('g'), { is_group: false }))).toEqual({ children: true, parent: null });
    expect(decided(planLabelUpdate(admin, group('g', 'p'), { parent_uuid: 'p', color: 'red' }))).toEqual({ children: false, parent: null });
    expect(decided(planLabelUpdate(admin, label('l'), { parent_uuid: 'p' }))).toEqual({ children: false, parent: 'p' });
    expect(codeOf(() => decideUpdateLabel(admin, group('g'), { is_group: false }, { hasChildren: true, parentChain: [] }, LATER))).toBe(
      'has_children',
    );
    expect(
      decided(decideUpdateLabel(admin, group('g'), { is_group: false }, { hasChildren: false, parentChain: [] }, LATER)).is_group,
    ).toBe(false);
  });

  it('lets the creator (unless a viewer now) or an admin update and delete', () => {
    const mine = label('mine');
    expect(canManageLabel(member, mine)).toBe(true);
    expect(canManageLabel(admin, mine)).toBe(true);
    expect(canManageLabel(callerAs('member', 'someone-else'), mine)).toBe(false);
    expect(canManageLabel(callerAs('viewer', member.userId), mine)).toBe(false);
    expect(() => decided(decideDeleteLabel(callerAs('member', 'someone-else'), mine))).toThrow(
      "Only admins and the label's creator can delete it",
    );
    expect(() => decided(planLabelUpdate(viewer, mine, { name: 'x' }))).toThrow('Viewers cannot change labels');
  });
});
