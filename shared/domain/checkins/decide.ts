import { todayUtc } from '#shared/clock.ts';
import { checkinOrderKey, type CheckinRecord, type CheckinSource } from '#shared/domain/checkins/entity.ts';
import { goalEditRefusal, type GoalAccess } from '#shared/domain/goals/refusals.ts';
import { FOLLOWED_FIELDS } from '#shared/domain/goals/derived-fields.ts';
import type { GoalRecord, GoalStatus } from '#shared/domain/goals/entity.ts';
import type { HistoryCause } from '#shared/domain/history/progress-cause.ts';
import { goalProgressAt } from '#shared/domain/goals/progress.ts';
import type { LabelRecord, LabelRef } from '#shared/domain/labels/entity.ts';
import { distinctLabels, namedLabels, type LabelNamesRead } from '#shared/domain/labels/decide.ts';
import { planGoalWrite, type AncestorsRead, type GoalWriteWithRollups } from '#shared/domain/goals/rollup-plan.ts';
import type { Stored } from '#shared/db/model.ts';
import { refuse, type Decision } from '#shared/decision.ts';
import { NotFoundError, ValidationError, type AppError } from '#shared/errors.ts';

/**
 * Check-in commands, the pure part: given what the command read (the goal, the caller's access to it, the
 * goal's newest check-ins, the labels the names resolve to), the input, the time and fresh ids, decide the
 * records to write or the typed error. No I/O, no clock, no id generation: test/unit/checkins-decide.test.ts.
 */

export type { Decision } from '#shared/decision.ts';

/** The domain's check-in commands (the check-in body schemas map to these). */
export interface CheckinCreateCommand {
  goal_uuid: string;
  value?: number | null;
  status?: GoalStatus;
  score?: number | null;
  note?: string | null;
  checkin_date?: string;
  /** Where the check-in came from (default `api`): set by the caller of the command, never by a request body. */
  source?: CheckinSource;
  /** The data source that wrote it (with `source: data_source`). */
  data_source_uuid?: string | null;
}
export interface CheckinUpdateCommand {
  value?: number | null;
  status?: GoalStatus;
  score?: number | null;
  note?: string | null;
}

/** A goal's check-in order item: the check-in's id and its position (checkinOrderKey). */
export interface OrderHead {
  id: string;
  orderKey: string;
}

export interface GoalState {
  goal: GoalRecord;
  access: GoalAccess;
  /** The goal's check-ins, newest first (as many as the command needs). */
  newest: OrderHead[];
}

/** What a check-in write commits: the check-in change and the goal (always written: it serializes the goal's check-ins). */
export interface CheckinWrite {
  checkin: CheckinRecord;
  goal: GoalRecord;
}

/**
 * The caller may change the goal's check-ins: the goal's edit refusal (403, or `hidden` for a goal it cannot
 * see), then 422 when the goal is deleted or archived (its check-ins are frozen).
 */
export function checkinWriteRefusal(goal: GoalRecord, access: GoalAccess, hidden?: () => AppError): AppError | undefined {
  return (
    goalEditRefusal(access, hidden) ??
    (goal.discarded_at
      ? ValidationError.field('goal_uuid', 'discarded', 'This goal is deleted; its check-ins cannot change')
      : undefined) ??
    (goal.archived_at ? ValidationError.field('goal_uuid', 'archived', 'This goal is archived; its check-ins cannot change') : undefined)
  );
}

/** `score` only with status closed. */
export function scoreRefusal(status: GoalStatus, score: number | null | undefined): AppError | undefined {
  if (score !== null && score !== undefined && status !== 'closed')
    return ValidationError.field('score', 'not_closed', 'score can only be set on a check-in with status closed');
  return undefined;
}

/** Today in the tenant's time zone (UTC: contract section 7). */

/**
 * The goal's fields that follow its latest check-in (FOLLOWED_FIELDS, goals/derived-fields.ts), set from `latest`
 * (or reset when the goal has none). Pure; the caller decides whether anything changed.
 */
function goalFollowing(goal: GoalRecord, latest: CheckinRecord | undefined): GoalRecord {
  // A rollup goal's progress is its children's (progress.ts), whatever its own check-ins say.
  const progress = goal.progress_mode === 'rollup' ? goal.current_progress : latest ? goalProgressAt(goal, latest.value) : null;
  return {
    ...goal,
    current_value: latest?.value ?? null,
    current_progress: progress,
    current_status: latest?.status ?? 'not_started',
    score: latest?.score ?? null,
    last_checkin_date: latest?.checkin_date ?? null,
    value_updated_at: latest?.updated_at ?? null,
    value_updated_by_uuid: latest?.updated_by_uuid ?? null,
    status_updated_at: latest?.updated_at ?? null,
    status_updated_by_uuid: latest?.updated_by_uuid ?? null,
  };
}

/**
 * The goal following `latest` with `updated_at` moved, or undefined when it already does (nothing to write).
 * The stream's current-values projection writes it as is (a repair: no check-in write caused it).
 */
export function goalRepair(goal: GoalRecord, latest: CheckinRecord | undefined, now: string): GoalRecord | undefined {
  const next = goalFollowing(goal, latest);
  return FOLLOWED_FIELDS.some((k) => next[k] !== goal[k]) ? { ...next, updated_at: now } : undefined;
}

/** The goal record to write: following `latest`, with `updated_at` moved only when a followed field changed. */
export function goalAfter(goal: GoalRecord, latest: CheckinRecord | undefined, now: string, cause: HistoryCause): GoalRecord {
  const next = goalRepair(goal, latest, now);
  return next ? { ...next, progress_cause: { cause, at: now } } : goal;
}

/** `label_uuids` and the names kept beside them (`labels`), each label once. */
function labelFields(named: LabelRef[]): Pick<CheckinRecord, 'label_uuids' | 'labels'> {
  const labels = distinctLabels(named);
  return { label_uuids: labels.map((l) => l.uuid), labels };
}

/** `state` undefined: the goal named is not there (`hidden`, as one the caller cannot see). */
export function decideCreate(
  state: GoalState | undefined,
  input: CheckinCreateCommand,
  labels: LabelRef[],
  ctx: { callerUuid: string; hidden: () => AppError },
  now: string,
  ids: { checkin: string },
): Decision<CheckinWrite> {
  if (!state) return refuse(ctx.hidden());
  const { goal: g } = state;
  const status = input.status ?? 'not_started';
  const error = checkinWriteRefusal(g, state.access, ctx.hidden) ?? scoreRefusal(status, input.score);
  if (error) return { error };
  const value = input.value ?? null;
  const checkin: CheckinRecord = {
    uuid: ids.checkin,
    goal_uuid: g.uuid,
    goal_type: g.type,
    metric_uuid: g.current_metric_uuid,
    value,
    progress: goalProgressAt(g, value),
    score: input.score ?? null,
    checkin_date: input.checkin_date ?? todayUtc(now),
    status,
    note: input.note ?? null,
    creator_uuid: ctx.callerUuid,
    updated_by_uuid: ctx.callerUuid,
    source_type: null,
    source_info: {},
    source: input.source ?? 'api',
    data_source_uuid: input.data_source_uuid ?? null,
    mentioned_entities: {},
    ...labelFields(labels),
    created_at: now,
    updated_at: now,
  };
  // A back-dated check-in behind the current latest leaves the goal where it is.
  const head = state.newest[0];
  return { write: { checkin, goal: head && head.orderKey > checkinOrderKey(checkin) ? g : goalAfter(g, checkin, now, 'checkin') } };
}

/** The first round of a check-in create's read (no caller needed): the goal named (undefined: not there) and the label names. */
export interface CheckinGoalRead {
  goal: Stored<GoalRecord> | undefined;
  labels: LabelNamesRead;
}

/** Everything a check-in create reads: the first round, then, when the goal is there, what it names. */
export type CheckinCreateState =
  | (CheckinGoalRead & { goal: undefined })
  | (CheckinGoalRead & {
      goal: Stored<GoalRecord>;
      around: GoalAround;
    });

/** What every check-in command reads after the goal: the goal as read, the caller's access, its newest check-ins, its rollup ancestors. */
export interface GoalAround {
  stored: Stored<GoalRecord>;
  access: GoalAccess;
  newest: OrderHead[];
  ancestors: AncestorsRead;
}

/** What a command on one check-in reads: the check-in (404 without it), its goal and what that names (404 without it), what else it reads. */
export type OnCheckinState<X> =
  | { current: undefined }
  | { current: Stored<CheckinRecord>; goal: undefined }
  | { current: Stored<CheckinRecord>; goal: GoalAround; extra: X };

/** What a check-in update or delete writes, all of it decided: the check-in as read and as written, new labels, the goal with its rollup ancestors. */
export interface CheckinChangeWrite {
  current: Stored<CheckinRecord>;
  checkin: CheckinRecord;
  createdLabels: LabelRecord[];
  goal: GoalWriteWithRollups;
  access: GoalAccess;
}

export const checkinNotFound = (id: string) => new NotFoundError('Checkin', id);
const goalNotFound = (id: string) => new NotFoundError('Goal', id);

/** The whole update, pure: 404s, the label names (422), decideUpdate, then the goal's rollup ancestors (planGoalWrite). */
export function decideCheckinUpdate(
  s: OnCheckinState<LabelNamesRead | undefined>,
  id: string,
  input: CheckinUpdateCommand,
  labelIds: readonly string[],
  ctx: { callerUuid: string },
  now: string,
): Decision<CheckinChangeWrite> {
  if (!s.current) return refuse(checkinNotFound(id));
  if (!s.goal) return refuse(goalNotFound(s.current.record.goal_uuid));
  const labels = s.extra === undefined ? undefined : namedLabels(s.extra, labelIds, ctx.callerUuid, now);
  if (labels && 'error' in labels) return labels;
  const { stored, access, newest, ancestors } = s.goal;
  const decided = decideUpdate({ goal: stored.record, access, newest }, s.current.record, input, labels?.write.labels, ctx, now);
  if ('error' in decided) return decided;
  return {
    write: {
      current: s.current,
      checkin: decided.write.checkin,
      createdLabels: labels?.write.created ?? [],
      goal: planGoalWrite(stored, decided.write.goal, ancestors, now),
      access,
    },
  };
}

/** The whole delete, pure: 404s, decideDelete (`extra`: the next latest check-in, read only when this one is the latest), then the rollup ancestors. */
export function decideCheckinDelete(s: OnCheckinState<CheckinRecord | undefined>, id: string, now: string): Decision<CheckinChangeWrite> {
  if (!s.current) return refuse(checkinNotFound(id));
  if (!s.goal) return refuse(goalNotFound(s.current.record.goal_uuid));
  const { stored, access, newest, ancestors } = s.goal;
  const decided = decideDelete({ goal: stored.record, access, newest }, s.current.record, s.extra, now);
  if ('error' in decided) return decided;
  return {
    write: {
      current: s.current,
      checkin: s.current.record,
      createdLabels: [],
      goal: planGoalWrite(stored, decided.write.goal, ancestors, now),
      access,
    },
  };
}

/** What a check-in create writes, all of it decided: the check-in, new labels, the goal with its rollup ancestors. */
export interface CheckinCreateWrite {
  checkin: CheckinRecord;
  createdLabels: LabelRecord[];
  goal: GoalWriteWithRollups;
  /** The caller's access to the goal (what the answer presents). */
  access: GoalAccess;
}

/**
 * The whole create, pure: the label names (422 for one out of bounds, answered first), the check-in rules
 * (decideCreate), then the goal following its latest check-in with each rollup ancestor moved by it
 * (planGoalWrite: contract 6, read-your-writes).
 */
export function decideCheckinCreate(
  state: CheckinCreateState,
  input: CheckinCreateCommand,
  ctx: { callerUuid: string; hidden: () => AppError },
  now: string,
  ids: { checkin: string; labels: readonly string[] },
): Decision<CheckinCreateWrite> {
  const labels = namedLabels(state.labels, ids.labels, ctx.callerUuid, now);
  if ('error' in labels) return labels;
  if (!state.goal) return refuse(ctx.hidden());
  const { access, newest, ancestors } = state.around;
  const decided = decideCreate({ goal: state.goal.record, access, newest }, input, labels.write.labels, ctx, now, ids);
  if ('error' in decided) return decided;
  return {
    write: {
      checkin: decided.write.checkin,
      createdLabels: labels.write.created,
      goal: planGoalWrite(state.goal, decided.write.goal, ancestors, now),
      access,
    },
  };
}

export function decideUpdate(
  state: GoalState,
  current: CheckinRecord,
  input: CheckinUpdateCommand,
  labels: LabelRef[] | undefined,
  ctx: { callerUuid: string },
  now: string,
): Decision<CheckinWrite> {
  const { goal: g } = state;
  const status = input.status ?? current.status;
  const error = checkinWriteRefusal(g, state.access) ?? scoreRefusal(status, input.score);
  if (error) return { error };
  const next: CheckinRecord = {
    ...current,
    status,
    // moving a check-in off closed clears its score
    score: status !== 'closed' ? null : input.score !== undefined ? input.score : current.score,
    note: input.note !== undefined ? input.note : current.note,
    updated_by_uuid: ctx.callerUuid,
    updated_at: now,
  };
  if (input.value !== undefined)
    Object.assign(next, { value: input.value, progress: goalProgressAt(g, input.value ?? null), metric_uuid: g.current_metric_uuid });
  if (labels !== undefined) Object.assign(next, labelFields(labels));
  return { write: { checkin: next, goal: state.newest[0]?.id === current.uuid ? goalAfter(g, next, now, 'checkin_updated') : g } };
}

/** `nextLatest`: the check-in that becomes the goal's latest when `current` is (read only then). */
export function decideDelete(
  state: GoalState,
  current: CheckinRecord,
  nextLatest: CheckinRecord | undefined,
  now: string,
): Decision<CheckinWrite> {
  const error = checkinWriteRefusal(state.goal, state.access);
  if (error) return { error };
  return {
    write: {
      checkin: current,
      goal: state.newest[0]?.id === current.uuid ? goalAfter(state.goal, nextLatest, now, 'checkin_deleted') : state.goal,
    },
  };
}

/** True when deleting `checkinUuid` needs the next latest check-in read (it is the goal's latest). */
export const deleteNeedsNext = (newest: OrderHead[], checkinUuid: string) => newest[0]?.id === checkinUuid && newest.length > 1;

/**
 * Read plan (pure): whether a check-in dated `date`, at which the goal's progress would be `progress` (undefined:
 * not known before the order is read, a delete's next latest), may move the goal's progress, so that the goal's
 * rollup ancestors are worth reading with it: not for a goal without parents or in rollup mode (its progress is
 * its children's), nor for a check-in dated before the goal's latest (the goal does not follow it), nor at the
 * progress the goal has. Should the goal not follow its latest check-in (written another way), a write that moves
 * it after all finds its ancestors unread: planGoalWrite leaves them to the recompute after the commit, never wrong.
 */
export const mayMoveParents = (goal: GoalRecord, date: string, progress: number | null | undefined) =>
  goal.parent_links.length > 0 &&
  goal.progress_mode !== 'rollup' &&
  (goal.last_checkin_date === null || date >= goal.last_checkin_date) &&
  progress !== goal.current_progress;
