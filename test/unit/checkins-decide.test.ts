import { describe, expect, it } from 'vitest';
import { decideCreate, decideDelete, decideUpdate, deleteNeedsNext, goalAfter, type GoalState } from '#shared/domain/checkins/decide.ts';
import { checkinOrderKey, type CheckinRecord } from '#shared/domain/checkins/entity.ts';
import { ForbiddenError, ValidationError, type AppError } from '#shared/errors.ts';
import { goalRecord } from '../support/goal-record.ts';

/** The check-in rules on plain objects: no DynamoDB, no clock, no ids generated. */
const NOW = '2025-02-10T12:00:00.000Z';
const goal = goalRecord;
const editor = { canView: true, canEdit: true, source: 'owner' as const };
const state = (over: Partial<GoalState> = {}): GoalState => ({ goal: goal(), access: editor, newest: [], ...over });
const hidden = () => ValidationError.field('goal_uuid', 'not_found', 'unknown');
const ctx = { callerUuid: 'u1', hidden };
const errorOf = (d: { error: AppError } | { write: unknown }) => ('error' in d ? d.error : undefined);
const writeOf = <T>(d: { error: AppError } | { write: T }) => {
  if ('error' in d) throw d.error;
  return d.write;
};

describe('check-in decide', () => {
  it('create: the check-in takes its progress from the goal metric and the goal follows it', () => {
    const w = writeOf(decideCreate(state(), { goal_uuid: 'g1', value: 50, status: 'on_track' }, [], ctx, NOW, { checkin: 'c1' }));
    expect(w.checkin).toMatchObject({
      uuid: 'c1',
      goal_uuid: 'g1',
      value: 50,
      progress: 25,
      metric_uuid: 'm1',
      checkin_date: '2025-02-10',
      creator_uuid: 'u1',
      created_at: NOW,
    });
    expect(w.goal).toMatchObject({
      current_value: 50,
      current_progress: 25,
      current_status: 'on_track',
      last_checkin_date: '2025-02-10',
      value_updated_by_uuid: 'u1',
      updated_at: NOW,
    });
  });

  it('create: a back-dated check-in behind the latest leaves the goal as it is', () => {
    const latest = { id: 'c0', orderKey: checkinOrderKey({ checkin_date: '2025-02-09', created_at: NOW, uuid: 'c0' }) };
    const before = state({ newest: [latest] });
    const w = writeOf(decideCreate(before, { goal_uuid: 'g1', value: 10, checkin_date: '2025-01-05' }, [], ctx, NOW, { checkin: 'c1' }));
    expect(w.goal).toBe(before.goal);
  });

  it('refusals: hidden goal reads as unknown, not editable 403, deleted or archived 422, score off closed 422', () => {
    expect(
      errorOf(
        decideCreate(state({ access: { canView: false, canEdit: false, source: null } }), { goal_uuid: 'g1' }, [], ctx, NOW, {
          checkin: 'c',
        }),
      ),
    ).toMatchObject({ status: 422, details: [{ field: 'goal_uuid', code: 'not_found' }] });
    expect(
      errorOf(
        decideCreate(state({ access: { canView: true, canEdit: false, source: 'public' } }), { goal_uuid: 'g1' }, [], ctx, NOW, {
          checkin: 'c',
        }),
      ),
    ).toBeInstanceOf(ForbiddenError);
    expect(
      errorOf(decideCreate(state({ goal: goal({ discarded_at: NOW }) }), { goal_uuid: 'g1' }, [], ctx, NOW, { checkin: 'c' })),
    ).toMatchObject({ details: [{ code: 'discarded' }] });
    expect(
      errorOf(decideCreate(state({ goal: goal({ archived_at: NOW }) }), { goal_uuid: 'g1' }, [], ctx, NOW, { checkin: 'c' })),
    ).toMatchObject({ details: [{ code: 'archived' }] });
    expect(
      errorOf(decideCreate(state(), { goal_uuid: 'g1', status: 'on_track', score: 0.5 }, [], ctx, NOW, { checkin: 'c' })),
    ).toMatchObject({ details: [{ field: 'score', code: 'not_closed' }] });
  });

  it('update: moving off closed clears the score; only the latest check-in moves the goal', () => {
    const c = writeOf(
      decideCreate(state(), { goal_uuid: 'g1', value: 100, status: 'closed', score: 0.7 }, [], ctx, NOW, { checkin: 'c1' }),
    ).checkin;
    const latest = state({ newest: [{ id: 'c1', orderKey: checkinOrderKey(c) }] });
    const w = writeOf(decideUpdate(latest, c, { status: 'on_track' }, undefined, { callerUuid: 'u2' }, NOW));
    expect(w.checkin).toMatchObject({ status: 'on_track', score: null, updated_by_uuid: 'u2' });
    expect(w.goal).toMatchObject({ current_status: 'on_track', status_updated_by_uuid: 'u2' });
    const older = state({ newest: [{ id: 'other', orderKey: 'z' }] });
    expect(writeOf(decideUpdate(older, c, { value: 150 }, undefined, { callerUuid: 'u2' }, NOW)).goal).toBe(older.goal);
  });

  it('delete: the goal follows the next latest, or goes back to never checked in', () => {
    const c = {
      uuid: 'c1',
      value: 100,
      status: 'closed',
      score: 1,
      checkin_date: '2025-02-10',
      updated_at: NOW,
      updated_by_uuid: 'u1',
    } as CheckinRecord;
    const prev = { ...c, uuid: 'c0', value: 20, status: 'behind', score: null, checkin_date: '2025-02-01' } as CheckinRecord;
    const followed = state({
      goal: goalAfter(goal(), c, NOW, 'checkin'),
      newest: [
        { id: 'c1', orderKey: 'b' },
        { id: 'c0', orderKey: 'a' },
      ],
    });
    expect(deleteNeedsNext(followed.newest, 'c1')).toBe(true);
    expect(writeOf(decideDelete(followed, c, prev, NOW)).goal).toMatchObject({
      current_value: 20,
      current_progress: 10,
      current_status: 'behind',
      score: null,
    });
    expect(writeOf(decideDelete({ ...followed, newest: [{ id: 'c1', orderKey: 'b' }] }, c, undefined, NOW)).goal).toMatchObject({
      current_value: null,
      current_progress: null,
      current_status: 'not_started',
    });
  });

  it("a rollup goal keeps its children's progress whatever its own check-ins say", () => {
    const w = writeOf(
      decideCreate(
        state({ goal: goal({ progress_mode: 'rollup', current_progress: 42 }) }),
        { goal_uuid: 'g1', value: 200 },
        [],
        ctx,
        NOW,
        { checkin: 'c1' },
      ),
    );
    expect(w.goal).toMatchObject({ current_progress: 42, current_value: 200 });
  });
});
