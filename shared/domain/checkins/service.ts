import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { getEntity, mutateEntity, nowIso, querySide, retryOnConflict, WriteTx, type DataCtx, type Stored } from '#shared/db/store.ts';
import { checkinEntity, checkinOrderItemKey, checkinOrderKey, type CheckinRecord } from '#shared/domain/checkins/entity.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { readableGoal, requireGoalEditor, type GoalAccess } from '#shared/domain/goals/access.ts';
import { goalEntity, type GoalRecord, type GoalStatus } from '#shared/domain/goals/entity.ts';
import { goalProgressAt, refreshRollups } from '#shared/domain/goals/progress.ts';
import { primeLabels } from '#shared/domain/goals/present.ts';
import type { LabelRecord } from '#shared/domain/labels/entity.ts';
import { labelsForNames } from '#shared/domain/labels/service.ts';
import { NotFoundError, ValidationError, type AppError } from '#shared/errors.ts';
import type { CheckinCreateBody, CheckinUpdateBody } from '#shared/schemas/checkins.ts';

export type CheckinCreateInput = z.infer<typeof CheckinCreateBody>;
export type CheckinUpdateInput = z.infer<typeof CheckinUpdateBody>;

/** A check-in with its goal and the caller's access to that goal (what the caller may do with the check-in). */
export interface CheckinView {
  checkin: CheckinRecord;
  goal: GoalRecord;
  access: GoalAccess;
}

/*
 * Rules decided here (the spec and contract leave them open; the OpenAPI descriptions say the same):
 *  - A check-in is an action on its goal (the goal's `can_checkin`): creating, updating or deleting one
 *    needs edit rights on the goal, reading one needs the goal visible. `goal_uuid` in a create body is a
 *    reference (contract 1): a goal that is not in the caller's tenant (another tenant's uuid included) is
 *    422 validation_failed (field goal_uuid, code not_found), and so is a goal the caller cannot see, with
 *    the same answer (contract 5: nothing tells it exists); a goal the caller sees but cannot edit is 403.
 *    Updating, deleting or reading a check-in of a goal the caller cannot see or edit is 403 (the check-in
 *    is addressed by its own uuid, 404 outside the tenant). The check-ins of a deleted (discarded) or
 *    archived goal are frozen: creating, updating or deleting one is 422 validation_failed on goal_uuid
 *    (the goal's `can_checkin` is false then too).
 *  - The goal follows its latest check-in (latest checkin_date, then latest created): current_value,
 *    current_status, score, last_checkin_date, value/status_updated_at (= the check-in's updated_at) and
 *    value/status_updated_by_uuid (= who wrote it last), and current_progress = the goal's progress at
 *    that value (see progress.ts; a rollup goal keeps its rollup progress). With no check-in left the goal
 *    goes back to its never-checked-in state (nulls, current_status not_started).
 *  - `score` only with status closed (422 otherwise); on update, moving a check-in off closed clears it.
 *  - `progress` and `metric_uuid` of a check-in are taken from the goal's metric when the value is
 *    written (create, or update with `value`), so an old check-in keeps the progress it reported.
 *  - Delete is a hard delete; the response is the flat deleted record.
 */

const notFound = (id: string) => new NotFoundError('Checkin', id);
const goalNotFound = (id: string) => new NotFoundError('Goal', id);
/** goal_uuid of a create body naming no goal the caller can see (unknown, another tenant's, or invisible: one answer). */
const unknownGoal = (id: string) => ValidationError.field('goal_uuid', 'not_found', `goal_uuid ${id} is not a goal of this tenant`);

function checkScore(status: GoalStatus, score: number | null | undefined): void {
  if (score !== null && score !== undefined && status !== 'closed') {
    throw ValidationError.field('score', 'not_closed', 'score can only be set on a check-in with status closed');
  }
}

/**
 * The caller may change the goal's check-ins: 403 when it cannot see or edit the goal (`hidden` answers
 * instead for a goal it cannot see), 422 when the goal is deleted or archived.
 */
async function requireCheckinWriter(ctx: DomainCtx, goal: GoalRecord, hidden?: () => AppError): Promise<GoalAccess> {
  const access = await requireGoalEditor(ctx, goal, hidden);
  if (goal.discarded_at) throw ValidationError.field('goal_uuid', 'discarded', 'This goal is deleted; its check-ins cannot change');
  if (goal.archived_at) throw ValidationError.field('goal_uuid', 'archived', 'This goal is archived; its check-ins cannot change');
  return access;
}

/** Today in the tenant's time zone (UTC: contract section 7). */
const todayUtc = (now: string) => now.slice(0, 10);

// ---------- the goal follows its latest check-in ----------

/**
 * The goal's fields that follow its latest check-in, set from `latest` (or reset when the goal has none).
 * Pure; the caller decides whether anything changed.
 */
export function goalFollowing(goal: GoalRecord, latest: CheckinRecord | undefined): GoalRecord {
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

const FOLLOWED = ['current_value', 'current_progress', 'current_status', 'score', 'last_checkin_date', 'value_updated_at', 'value_updated_by_uuid', 'status_updated_at', 'status_updated_by_uuid'] as const;

/**
 * The goal record to write in a check-in's transaction. It is always written (conditioned on the version
 * read), even when it does not move: that version check is what serializes every check-in write of one
 * goal, so "which check-in is latest" is decided on data no concurrent check-in write has changed since.
 */
function goalAfter(goal: GoalRecord, latest: CheckinRecord | undefined, now: string): GoalRecord {
  const next = goalFollowing(goal, latest);
  return FOLLOWED.some((k) => next[k] !== goal[k]) ? { ...next, updated_at: now } : goal;
}

/**
 * The goal's check-ins newest first (by checkinOrderKey), read strongly consistently from its order
 * partition: at most `limit` ids. (A base-table Query: store.ts's queryList reads GSI1 only.)
 */
async function latestIds(ctx: DataCtx, goalUuid: string, limit: number): Promise<Array<{ id: string; orderKey: string }>> {
  const items = await querySide(ctx, checkinOrderItemKey(ctx.tenantId, goalUuid, '').PK, { forward: false, consistent: true, limit });
  return items.map((i) => ({ id: i.id as string, orderKey: i.SK }));
}

const putOrder = (ctx: DataCtx, tx: WriteTx, c: CheckinRecord) => tx.putSide(checkinOrderItemKey(ctx.tenantId, c.goal_uuid, checkinOrderKey(c)), { id: c.uuid, kind: 'checkin_order' });
const deleteOrder = (ctx: DataCtx, tx: WriteTx, c: CheckinRecord) => tx.deleteSide(checkinOrderItemKey(ctx.tenantId, c.goal_uuid, checkinOrderKey(c)));

/**
 * Runs one check-in write inside the goal's optimistic loop. Each attempt reads the goal once (strongly
 * consistent), checks the caller may change its check-ins (`unknown` when the goal is not in the tenant or
 * not visible, else 404 and 403; 403 when it cannot edit; 422 deleted or archived), then `change` adds the
 * check-in's own writes to `tx` and returns the goal to write.
 * The loop re-reads the goal (and `change` re-reads the check-ins) after every lost race. Many concurrent
 * check-ins on one goal can outlast mutateEntity's own retries, so the whole loop is retried again
 * (retryOnConflict) before a 409 reaches the client. Afterwards, when the goal's progress moved, its rollup
 * ancestors are brought up to date before the request returns.
 */
async function writeOnGoal(
  ctx: DomainCtx,
  goalUuid: string,
  change: (goal: GoalRecord, tx: WriteTx) => Promise<GoalRecord>,
  opts: { unknown?: () => AppError } = {},
): Promise<{ goal: GoalRecord; access: GoalAccess }> {
  let access!: GoalAccess;
  const { before, after } = await retryOnConflict(() =>
    mutateEntity(
      ctx,
      goalEntity,
      goalUuid,
      async (current, tx) => {
        access = await requireCheckinWriter(ctx, current.record, opts.unknown);
        return change(current.record, tx);
      },
      opts.unknown ?? (() => goalNotFound(goalUuid)),
    ),
  );
  if (after.current_progress !== before.record.current_progress) await refreshRollups(ctx, [after]);
  ctx.loader.prime(goalEntity, after);
  return { goal: after, access };
}

/**
 * The check-in an update or delete works on: read (strongly consistent) before the goal's loop to learn its
 * goal, and used as is by the loop's first attempt, re-read by every later one. Its own write is
 * conditioned on the version read, so a stale copy can only cost a retry.
 */
function checkinSource(ctx: DataCtx, id: string, first: Stored<CheckinRecord>): () => Promise<Stored<CheckinRecord>> {
  let pending: Stored<CheckinRecord> | undefined = first;
  return async () => {
    const current = pending ?? (await storedCheckin(ctx, id, true));
    pending = undefined;
    return current;
  };
}

// ---------- reads ----------

async function storedCheckin(ctx: DataCtx, id: string, consistent = false): Promise<Stored<CheckinRecord>> {
  const stored = await getEntity(ctx, checkinEntity, id, consistent);
  if (!stored) throw notFound(id);
  return stored;
}

/** GET /checkins/{id}: 404 outside the caller's tenant, 403 when the caller cannot see its goal. */
export async function getCheckin(ctx: DomainCtx, id: string): Promise<CheckinView> {
  const { record } = await storedCheckin(ctx, id);
  const { goal, access } = await readableGoal(ctx, record.goal_uuid);
  return { checkin: record, goal, access };
}

// ---------- writes ----------

export async function createCheckin(ctx: DomainCtx, input: CheckinCreateInput): Promise<CheckinView> {
  const status = input.status ?? 'not_started';
  // Identity and creation time are fixed before the loop: every retried attempt writes the same check-in.
  const now = nowIso();
  const uuid = randomUUID();
  let created!: CheckinRecord;
  let labels: LabelRecord[] = [];
  const { goal: after, access } = await writeOnGoal(ctx, input.goal_uuid.toLowerCase(), async (g, tx) => {
    checkScore(status, input.score);
    labels = await labelsForNames(ctx, input.labels ?? [], tx);
    const value = input.value ?? null;
    created = {
      uuid,
      goal_uuid: g.uuid,
      goal_type: g.type,
      metric_uuid: g.current_metric_uuid,
      value,
      progress: goalProgressAt(g, value),
      score: input.score ?? null,
      checkin_date: input.checkin_date ?? todayUtc(now),
      status,
      note: input.note ?? null,
      creator_uuid: ctx.caller.userId,
      updated_by_uuid: ctx.caller.userId,
      source_type: null,
      source_info: {},
      mentioned_entities: {},
      label_uuids: [...new Set(labels.map((l) => l.uuid))],
      created_at: now,
      updated_at: now,
    };
    tx.create(checkinEntity, created);
    putOrder(ctx, tx, created);
    // A back-dated check-in behind the current latest leaves the goal where it is.
    const [head] = await latestIds(ctx, g.uuid, 1);
    return head && head.orderKey > checkinOrderKey(created) ? g : goalAfter(g, created, now);
  }, { unknown: () => unknownGoal(input.goal_uuid) });
  primeLabels(ctx, labels);
  return { checkin: created, goal: after, access };
}

export async function updateCheckin(ctx: DomainCtx, id: string, input: CheckinUpdateInput): Promise<CheckinView> {
  const first = await storedCheckin(ctx, id, true);
  const read = checkinSource(ctx, id, first);
  let updated!: CheckinRecord;
  let labels: LabelRecord[] = [];
  const { goal: after, access } = await writeOnGoal(ctx, first.record.goal_uuid, async (g, tx) => {
    const current = await read();
    const c = current.record;
    const status = input.status ?? c.status;
    checkScore(status, input.score);
    const now = nowIso();
    const next: CheckinRecord = {
      ...c,
      status,
      score: status !== 'closed' ? null : input.score !== undefined ? input.score : c.score,
      note: input.note !== undefined ? input.note : c.note,
      updated_by_uuid: ctx.caller.userId,
      updated_at: now,
    };
    if (input.value !== undefined) Object.assign(next, { value: input.value, progress: goalProgressAt(g, input.value), metric_uuid: g.current_metric_uuid });
    if (input.labels !== undefined) {
      labels = await labelsForNames(ctx, input.labels, tx);
      next.label_uuids = [...new Set(labels.map((l) => l.uuid))];
    }
    tx.replace(checkinEntity, current, next);
    updated = next;
    const [head] = await latestIds(ctx, g.uuid, 1);
    return head?.id === id ? goalAfter(g, next, now) : g;
  });
  primeLabels(ctx, labels);
  return { checkin: updated, goal: after, access };
}

/** Hard-deletes a check-in; when it was the goal's latest, the goal follows the one latest afterwards. Returns the deleted record. */
export async function deleteCheckin(ctx: DomainCtx, id: string): Promise<CheckinView> {
  const first = await storedCheckin(ctx, id, true);
  const read = checkinSource(ctx, id, first);
  let deleted!: CheckinRecord;
  const { goal: after, access } = await writeOnGoal(ctx, first.record.goal_uuid, async (g, tx) => {
    const current = await read();
    deleted = current.record;
    tx.remove(checkinEntity, current);
    deleteOrder(ctx, tx, current.record);
    const [head, second] = await latestIds(ctx, g.uuid, 2);
    if (head?.id !== id) return g;
    const next = second ? (await getEntity(ctx, checkinEntity, second.id, true))?.record : undefined;
    return goalAfter(g, next, nowIso());
  });
  return { checkin: deleted, goal: after, access };
}
