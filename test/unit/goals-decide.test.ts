import { describe, expect, it } from 'vitest';
import type { Stored } from '#shared/db/model.ts';
import type { GoalAccess } from '#shared/domain/goals/refusals.ts';
import {
  createRefusal,
  decideArchive,
  decideCreate,
  decideDelete,
  decideUpdate,
  type CreateState,
  type Decision,
  type SeenGoal,
  type UpdateState,
} from '#shared/domain/goals/decide.ts';
import { labelNamesOf, resolveLabels } from '#shared/domain/labels/decide.ts';
import type { GoalRecord } from '#shared/domain/goals/entity.ts';
import { pathUnder } from '#shared/domain/goals/rules.ts';
import type { LabelRecord } from '#shared/domain/labels/entity.ts';
import type { TimePeriodRecord } from '#shared/domain/time-periods/entity.ts';
import { ForbiddenError, NotFoundError, type AppError } from '#shared/errors.ts';

/** The goal rules on plain objects: no DynamoDB, no clock, no ids generated. */
const NOW = '2025-02-10T12:00:00.000Z';
const period = { uuid: 'p1', name: 'Q1', start_date: '2025-01-01', end_date: '2025-03-31' } as TimePeriodRecord;
const q2 = { uuid: 'p2', name: 'Q2', start_date: '2025-04-01', end_date: '2025-06-30' } as TimePeriodRecord;
const admin = { userUuid: 'u1', canWriteContent: true };
const viewer = { userUuid: 'u9', canWriteContent: false };
const editor: GoalAccess = { canView: true, canEdit: true, source: 'owner' };
const reader: GoalAccess = { canView: true, canEdit: false, source: 'public' };
const blind: GoalAccess = { canView: false, canEdit: false, source: null };
const ids = { metric: 'm-new', goal: 'g-new', labels: ['l-new-1', 'l-new-2', 'l-new-3'] };
const updateIds = { shortId: 'sid-new', metric: 'm-new', labels: ['l-new-1', 'l-new-2'] };

const goal = (over: Partial<GoalRecord> = {}): GoalRecord =>
  ({
    uuid: 'g1',
    type: 'objective',
    title: 'Grow',
    description: null,
    start_date: '2025-01-01',
    end_date: '2025-03-31',
    time_period_uuid: 'p1',
    metric: null,
    current_metric_uuid: null,
    progress_mode: 'manual',
    current_progress: null,
    current_value: null,
    current_status: 'not_started',
    path: 'g1',
    short_id: null,
    short_id_uuid: null,
    owner_uuids: [],
    team_uuids: [],
    label_uuids: [],
    delegate_uuids: [],
    parent_links: [],
    visible_entities: [],
    discarded_at: null,
    archived_at: null,
    archived_by_uuid: null,
    creator_uuid: 'u1',
    updated_at: '2025-01-01T00:00:00.000Z',
    ...over,
  }) as GoalRecord;
const seen = (g: GoalRecord, access: GoalAccess = editor, version = 3): SeenGoal => ({ stored: { record: g, version }, access });
const createState = (over: Partial<CreateState> = {}): CreateState => ({
  period,
  known: { users: new Set(['u1', 'u2']), teams: new Set(['t1']) },
  parents: new Map(),
  labelClaims: new Map(),
  labels: new Map(),
  ...over,
});
const updateState = (over: Partial<UpdateState> = {}): UpdateState => ({
  period,
  known: { users: new Set(['u1', 'u2']), teams: new Set(['t1']) },
  parents: new Map(),
  below: new Set(),
  labelClaims: new Map(),
  labels: new Map(),
  ...over,
});
const errorOf = (d: Decision<unknown>): AppError | undefined => ('error' in d ? d.error : undefined);
const writeOf = <T>(d: Decision<T>): T => {
  if ('error' in d) throw d.error;
  return d.write;
};
const label = (uuid: string, name: string) => ({ uuid, name, is_group: false, parent_uuid: null }) as LabelRecord;

describe('goal create decide', () => {
  it('builds the record: period dates by default, ids as given, path below the first parent, searchable content', () => {
    const parent = seen(goal({ uuid: 'top', path: 'root/top' }));
    const w = writeOf(
      decideCreate(
        'key_result',
        {
          title: 'Ship It',
          time_period_uuid: 'p1',
          owner_uuids: ['u2', 'u2'],
          metric: { target_value: 10 },
          parents: ['top', { parent_uuid: 'top', contribution_percent: 5 }],
        },
        createState({ parents: new Map([['top', parent]]) }),
        admin,
        NOW,
        ids,
      ),
    );
    expect(w.goal).toMatchObject({
      uuid: 'g-new',
      type: 'key_result',
      start_date: '2025-01-01',
      end_date: '2025-03-31',
      owner_uuids: ['u2'],
      creator_uuid: 'u1',
      created_at: NOW,
      metric: { uuid: 'm-new', start_value: 0, target_value: 10, metric_type: 'reach' },
      current_metric_uuid: 'm-new',
      parent_links: [{ parent_uuid: 'top', contribution_percent: 100 }],
      path: 'root/top/g-new',
      searchable_content: 'ship it',
    });
    expect(w.parents).toEqual([parent.stored]); // version-checked at commit
  });

  it('refuses in order: viewer 403 (the precheck, before any read), delegate conflict, unknown period, then every field rule at once', () => {
    expect(createRefusal(viewer)).toBeInstanceOf(ForbiddenError);
    expect(createRefusal(admin)).toBeUndefined();
    expect(
      errorOf(
        decideCreate(
          'objective',
          { title: 'x', time_period_uuid: 'p1', delegate_uuid: 'u2', delegate_uuids: ['u2'] },
          createState({ period: undefined }),
          admin,
          NOW,
          ids,
        ),
      ),
    ).toMatchObject({ details: [{ field: 'delegate_uuid', code: 'conflict' }] });
    expect(
      errorOf(decideCreate('objective', { title: 'x', time_period_uuid: 'nope' }, createState({ period: undefined }), admin, NOW, ids)),
    ).toMatchObject({ details: [{ field: 'time_period_uuid', code: 'not_found' }] });
    const all = errorOf(
      decideCreate(
        'objective',
        {
          title: 'x',
          time_period_uuid: 'p1',
          start_date: '2025-05-01',
          owner_uuids: ['ghost'],
          team_uuids: ['t-gone'],
          parents: ['missing'],
          metric: { target_value: 0 },
        },
        createState(),
        admin,
        NOW,
        ids,
      ),
    );
    expect(all?.details.map((d) => `${d.field}:${d.code}`)).toEqual([
      'start_date:out_of_range',
      'start_date:order',
      'owner_uuids:not_found',
      'team_uuids:not_found',
      'parents:not_found',
      'metric.target_value:invalid',
    ]);
  });

  it('parents: hidden reads as unknown, not editable is 403, deleted is 422 discarded', () => {
    const at = (access: GoalAccess, over: Partial<GoalRecord> = {}) =>
      createState({ parents: new Map([['p', seen(goal({ uuid: 'p', ...over }), access)]]) });
    const body = { title: 'x', time_period_uuid: 'p1', parents: ['p'] };
    expect(errorOf(decideCreate('objective', body, at(blind), admin, NOW, ids))).toMatchObject({
      details: [{ field: 'parents', code: 'not_found' }],
    });
    expect(errorOf(decideCreate('objective', body, at(reader), admin, NOW, ids))).toBeInstanceOf(ForbiddenError);
    expect(errorOf(decideCreate('objective', body, at(editor, { discarded_at: NOW }), admin, NOW, ids))).toMatchObject({
      details: [{ field: 'parents', code: 'discarded' }],
    });
  });

  it('labels: existing ones by their claim (any case), new ones with the n-th id; names out of bounds are 422', () => {
    const w = writeOf(
      decideCreate(
        'objective',
        { title: 'x', time_period_uuid: 'p1', labels: ['Fresh', 'EXISTING', 'existing '] },
        createState({ labelClaims: new Map([['existing', { uuid: 'l-old', name: 'Existing' }]]) }),
        admin,
        NOW,
        ids,
      ),
    );
    expect(w.labels.map((l) => [l.uuid, l.name])).toEqual([
      ['l-new-1', 'Fresh'],
      ['l-old', 'Existing'],
    ]);
    expect(w.createdLabels.map((l) => l.uuid)).toEqual(['l-new-1']);
    expect(w.goal.label_uuids).toEqual(['l-new-1', 'l-old']);
    // the goal keeps the names it presents, as the claims spell them
    expect(w.goal.labels).toEqual([
      { uuid: 'l-new-1', name: 'Fresh' },
      { uuid: 'l-old', name: 'Existing' },
    ]);
    // a claim written before claims carried the name: named from the label read for it
    const old = writeOf(
      decideCreate(
        'objective',
        { title: 'x', time_period_uuid: 'p1', labels: ['existing'] },
        createState({ labelClaims: new Map([['existing', { uuid: 'l-old' }]]), labels: new Map([['l-old', label('l-old', 'Existing')]]) }),
        admin,
        NOW,
        ids,
      ),
    );
    expect(old.goal.labels).toEqual([{ uuid: 'l-old', name: 'Existing' }]);
    expect(old.createdLabels).toEqual([]);
    expect(
      errorOf(decideCreate('objective', { title: 'x', time_period_uuid: 'p1', labels: ['  '] }, createState(), admin, NOW, ids)),
    ).toMatchObject({ details: [{ field: 'labels', code: 'invalid' }] });
  });

  it('the same inputs decide the same records (a retry writes what the first attempt would have)', () => {
    const body = { title: 'x', time_period_uuid: 'p1', labels: ['a', 'b'], metric: { target_value: 3 } };
    expect(decideCreate('objective', body, createState(), admin, NOW, ids)).toEqual(
      decideCreate('objective', body, createState(), admin, NOW, ids),
    );
  });
});

describe('goal update decide', () => {
  it('404 for another kind, 403 when not editable, 422 when deleted', () => {
    expect(errorOf(decideUpdate('key_result', seen(goal()), {}, updateState(), admin, NOW, updateIds))).toBeInstanceOf(NotFoundError);
    expect(errorOf(decideUpdate('objective', seen(goal(), reader), {}, updateState(), admin, NOW, updateIds))).toBeInstanceOf(
      ForbiddenError,
    );
    expect(errorOf(decideUpdate('objective', seen(goal({ discarded_at: NOW })), {}, updateState(), admin, NOW, updateIds))).toMatchObject({
      details: [{ field: 'discarded_at', code: 'discarded' }],
    });
  });

  it('a new period resets the dates not sent; the same period again is no change; dates are checked against it', () => {
    const moved = writeOf(
      decideUpdate('objective', seen(goal()), { time_period_uuid: 'p2' }, updateState({ period: q2 }), admin, NOW, updateIds),
    ).goal;
    expect(moved).toMatchObject({ time_period_uuid: 'p2', start_date: '2025-04-01', end_date: '2025-06-30' });
    const same = writeOf(
      decideUpdate('objective', seen(goal({ start_date: '2025-02-01' })), { time_period_uuid: 'p1' }, updateState(), admin, NOW, updateIds),
    ).goal;
    expect(same.start_date).toBe('2025-02-01');
    expect(
      errorOf(decideUpdate('objective', seen(goal()), { end_date: '2025-04-02' }, updateState(), admin, NOW, updateIds)),
    ).toMatchObject({ details: [{ field: 'end_date', code: 'out_of_range' }] });
    expect(
      errorOf(
        decideUpdate('objective', seen(goal()), { time_period_uuid: 'gone' }, updateState({ period: undefined }), admin, NOW, updateIds),
      ),
    ).toMatchObject({ details: [{ field: 'time_period_uuid', code: 'not_found' }] });
  });

  it('labels: replaced with the names the claims spell (kept on the goal); not sent, the goal keeps what it had', () => {
    const named = goal({ label_uuids: ['l-a'], labels: [{ uuid: 'l-a', name: 'A' }] });
    const w = writeOf(
      decideUpdate(
        'objective',
        seen(named),
        { labels: ['b', 'New'] },
        updateState({ labelClaims: new Map([['b', { uuid: 'l-b', name: 'B' }]]) }),
        admin,
        NOW,
        updateIds,
      ),
    );
    expect(w.goal).toMatchObject({
      label_uuids: ['l-b', 'l-new-2'],
      labels: [
        { uuid: 'l-b', name: 'B' },
        { uuid: 'l-new-2', name: 'New' },
      ],
    });
    expect(w.labels).toEqual(w.goal.labels);
    expect(writeOf(decideUpdate('objective', seen(named), { title: 'T' }, updateState(), admin, NOW, updateIds)).goal.labels).toEqual(
      named.labels,
    );
    // a goal written before names were kept stays without them (the stream names it; presenting reads its labels meanwhile)
    expect(
      writeOf(decideUpdate('objective', seen(goal({ label_uuids: ['l-a'] })), { title: 'T' }, updateState(), admin, NOW, updateIds)).goal,
    ).not.toHaveProperty('labels');
  });

  it('short_id: upper-cased with a new assignment id, malformed 422, unchanged keeps its assignment', () => {
    expect(writeOf(decideUpdate('objective', seen(goal()), { short_id: 'ab-1' }, updateState(), admin, NOW, updateIds)).goal).toMatchObject(
      { short_id: 'AB-1', short_id_uuid: 'sid-new' },
    );
    expect(
      writeOf(
        decideUpdate(
          'objective',
          seen(goal({ short_id: 'AB-1', short_id_uuid: 'sid-old' })),
          { short_id: 'ab-1' },
          updateState(),
          admin,
          NOW,
          updateIds,
        ),
      ).goal.short_id_uuid,
    ).toBe('sid-old');
    expect(errorOf(decideUpdate('objective', seen(goal()), { short_id: 'a' }, updateState(), admin, NOW, updateIds))).toMatchObject({
      details: [{ field: 'short_id', code: 'malformed' }],
    });
  });

  it('status change records who and when; metric merges onto the current one and recomputes progress', () => {
    const g = goal({
      metric: { uuid: 'm1', name: null, start_value: 0, target_value: 100, unit: null, metric_type: 'reach' },
      current_metric_uuid: 'm1',
      current_value: 50,
      current_progress: 50,
    });
    const w = writeOf(
      decideUpdate(
        'objective',
        seen(g),
        { current_status: 'on_track', metric: { target_value: 200 } },
        updateState(),
        { userUuid: 'u2', canWriteContent: true },
        NOW,
        updateIds,
      ),
    ).goal;
    expect(w).toMatchObject({
      current_status: 'on_track',
      status_updated_at: NOW,
      status_updated_by_uuid: 'u2',
      metric: { uuid: 'm1', target_value: 200 },
      current_progress: 25,
    });
    expect(w.progress_cause).toEqual({ cause: 'metric_changed', at: NOW });
    expect(
      errorOf(decideUpdate('objective', seen(goal()), { metric: { unit: '%' } }, updateState(), admin, NOW, updateIds))?.details[0],
    ).toMatchObject({ field: 'metric.target_value', code: 'required' });
    expect(
      writeOf(decideUpdate('objective', seen(goal()), { metric: { target_value: 5 } }, updateState(), admin, NOW, updateIds)).goal
        .current_metric_uuid,
    ).toBe('m-new');
  });

  it('parents: kept links keep their weight, added ones are checked for cycles and version-checked, the path follows the first parent', () => {
    const g = goal({ parent_links: [{ parent_uuid: 'a', contribution_percent: 40 }], path: 'a/g1' });
    const b = seen(goal({ uuid: 'b', path: 'b' }));
    const w = writeOf(
      decideUpdate('objective', seen(g), { parents: ['b', 'a'] }, updateState({ parents: new Map([['b', b]]) }), admin, NOW, updateIds),
    );
    expect(w.goal.parent_links).toEqual([
      { parent_uuid: 'b', contribution_percent: 100 },
      { parent_uuid: 'a', contribution_percent: 40 },
    ]);
    expect(w.goal.path).toBe('b/g1');
    expect(w).toMatchObject({ parents: [b.stored], guard: true, removedParents: [] });
    expect(writeOf(decideUpdate('objective', seen(g), { parents: [] }, updateState(), admin, NOW, updateIds))).toMatchObject({
      goal: { path: 'g1', parent_links: [] },
      guard: false,
      removedParents: ['a'],
    });
    expect(
      errorOf(
        decideUpdate(
          'objective',
          seen(g),
          { parents: ['b'] },
          updateState({ parents: new Map([['b', b]]), below: new Set(['b']) }),
          admin,
          NOW,
          updateIds,
        ),
      ),
    ).toMatchObject({ details: [{ field: 'parents', code: 'cycle' }] });
    expect(errorOf(decideUpdate('objective', seen(g), { parents: ['g1'] }, updateState(), admin, NOW, updateIds))).toMatchObject({
      details: [{ field: 'parents', code: 'cycle' }],
    });
  });

  it('visible entities already on the goal are not checked again; new ones must exist', () => {
    const g = goal({ visible_entities: [{ entity_type: 'team', entity_uuid: 't-deleted', mode: 'view' }] });
    expect(
      writeOf(decideUpdate('objective', seen(g), { visible_entities: g.visible_entities }, updateState(), admin, NOW, updateIds)).goal
        .visible_entities,
    ).toEqual(g.visible_entities);
    expect(
      errorOf(
        decideUpdate(
          'objective',
          seen(g),
          { visible_entities: [{ entity_type: 'user', entity_uuid: 'ghost' }] },
          updateState(),
          admin,
          NOW,
          updateIds,
        ),
      ),
    ).toMatchObject({ details: [{ field: 'visible_entities', code: 'not_found' }] });
  });
});

describe('goal archive and delete decide', () => {
  it('archive sets and unarchive clears; repeating changes nothing', () => {
    const archived = writeOf(decideArchive('objective', seen(goal()), true, admin, NOW))!;
    expect(archived).toMatchObject({ archived_at: NOW, archived_by_uuid: 'u1', updated_at: NOW });
    expect(writeOf(decideArchive('objective', seen(archived), true, admin, NOW))).toBeUndefined();
    expect(writeOf(decideArchive('objective', seen(archived), false, admin, NOW))).toMatchObject({
      archived_at: null,
      archived_by_uuid: null,
    });
    expect(errorOf(decideArchive('objective', seen(goal({ discarded_at: NOW })), true, admin, NOW))).toMatchObject({
      details: [{ code: 'discarded' }],
    });
  });

  it('delete discards the goal and the others, skips deleted ones, names only goals the caller can see', () => {
    const child = seen(goal({ uuid: 'c1', type: 'key_result' }));
    const gone = seen(goal({ uuid: 'c2', discarded_at: '2025-01-05T00:00:00.000Z' }), reader);
    const w = writeOf(decideDelete('objective', {}, seen(goal()), { goals: [child, gone], truncated: false }, admin, NOW));
    expect(w.map((d) => [d.after.uuid, d.after.discarded_at, d.after.discarded_by_uuid])).toEqual([
      ['g1', NOW, 'u1'],
      ['c1', NOW, 'u1'],
    ]);
    expect(
      errorOf(decideDelete('objective', {}, seen(goal()), { goals: [seen(goal({ uuid: 'c3' }), reader)], truncated: false }, admin, NOW))
        ?.message,
    ).toContain('c3');
    expect(
      errorOf(decideDelete('objective', {}, seen(goal()), { goals: [seen(goal({ uuid: 'c4' }), blind)], truncated: false }, admin, NOW))
        ?.message,
    ).not.toContain('c4');
    expect(
      errorOf(decideDelete('objective', { delete_hierarchy: true }, seen(goal()), { goals: [], truncated: true }, admin, NOW)),
    ).toMatchObject({ details: [{ field: 'delete_hierarchy', code: 'too_many' }] });
    expect(errorOf(decideDelete('initiative', {}, seen(goal()), { goals: [], truncated: false }, admin, NOW))).toBeInstanceOf(
      NotFoundError,
    );
  });

  it('deleting a deleted goal again changes nothing', () => {
    const stored: Stored<GoalRecord> = { record: goal({ discarded_at: NOW }), version: 2 };
    expect(writeOf(decideDelete('objective', {}, { stored, access: editor }, { goals: [], truncated: false }, admin, NOW))).toEqual([]);
  });
});

describe('label names', () => {
  it('normalizes case and spaces, keeping the first spelling', () => {
    const names = labelNamesOf(['A  b', 'a b', 'C']);
    if ('error' in names) throw names.error;
    expect([...names.wanted]).toEqual([
      ['a b', 'A  b'],
      ['c', 'C'],
    ]);
    expect(resolveLabels(names.wanted, new Map(), new Map(), ['x', 'y'], 'u1', NOW).labels.map((l) => [l.uuid, l.name])).toEqual([
      ['x', 'A  b'],
      ['y', 'C'],
    ]);
  });
});

describe('path under the first parent (the goal-paths projection)', () => {
  const link = (parent_uuid: string) => ({ parent_uuid, contribution_percent: 100 });
  it('is the parent path then the goal; a root goal is its own uuid', () => {
    expect(pathUnder(goal({ uuid: 'c', parent_links: [link('b'), link('x')] }), goal({ uuid: 'b', path: 'a/b' }))).toBe('a/b/c');
    expect(pathUnder(goal({ uuid: 'c', parent_links: [] }), undefined)).toBe('c');
  });
  it('nothing when the parent is not (or no longer) the first parent, or its path passes through the goal', () => {
    expect(pathUnder(goal({ uuid: 'c', parent_links: [link('x'), link('b')] }), goal({ uuid: 'b', path: 'a/b' }))).toBeUndefined();
    expect(pathUnder(goal({ uuid: 'c', parent_links: [link('b')] }), undefined)).toBeUndefined();
    expect(pathUnder(goal({ uuid: 'c', parent_links: [] }), goal({ uuid: 'b', path: 'b' }))).toBeUndefined();
    expect(pathUnder(goal({ uuid: 'c', parent_links: [link('b')] }), goal({ uuid: 'b', path: 'c/a/b' }))).toBeUndefined();
  });
});
