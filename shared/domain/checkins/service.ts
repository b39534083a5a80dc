import { nowIso, todayUtc } from '#shared/clock.ts';
import { newId } from '#shared/ids.ts';
import { orStored, runCommand } from '#shared/command/run.ts';
import type { Stored } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { querySide } from '#shared/db/side-items.ts';
import type { WriteTx } from '#shared/db/write-tx.ts';
import {
  checkinNotFound,
  decideCheckinCreate,
  decideCheckinDelete,
  decideCheckinUpdate,
  deleteNeedsNext,
  mayMoveParents,
  type CheckinCreateCommand,
  type CheckinUpdateCommand,
  type CheckinCreateState,
  type CheckinGoalRead,
  type GoalAround,
  type OnCheckinState,
  type OrderHead,
} from '#shared/domain/checkins/decide.ts';
import { checkinEntity, checkinOrderItemKey, checkinOrderKey, type CheckinRecord } from '#shared/domain/checkins/entity.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalAccess } from '#shared/domain/goals/access.ts';
import type { GoalAccess } from '#shared/domain/goals/refusals.ts';
import { readableGoal } from '#shared/domain/goals/reads.ts';
import { goalEntity, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { goalProgressAt } from '#shared/domain/goals/progress.ts';
import { fittedTo, type GoalWriteWithRollups } from '#shared/domain/goals/rollup-plan.ts';
import { addGoalWrite, readAncestors, refreshRollupsAfterWrite } from '#shared/domain/goals/rollup-writes.ts';
import { reportSignal } from '#shared/signals.ts';
import { primeLabels, type LabelRecord } from '#shared/domain/labels/entity.ts';
import type { LabelNamesRead } from '#shared/domain/labels/decide.ts';
import { addLabelCreates, readLabelNames } from '#shared/domain/labels/service.ts';
import type { Loader } from '#shared/list/entity-cache.ts';
import { ValidationError } from '#shared/errors.ts';

/** The commands with the label names they attach (resolved to labels before deciding). */
export type CheckinCreateInput = CheckinCreateCommand & { labels?: string[] };
export type CheckinUpdateInput = CheckinUpdateCommand & { labels?: string[] };

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

/** goal_uuid of a create body naming no goal the caller can see (unknown, another tenant's, or invisible: one answer). */
export const unknownGoal = (id: string) => ValidationError.field('goal_uuid', 'not_found', `goal_uuid ${id} is not a goal of this tenant`);

/**
 * The goal's check-ins newest first (by checkinOrderKey), read strongly consistently from its order
 * partition: at most `limit`.
 */
export async function newestOf(ctx: DataCtx, goalUuid: string, limit: number): Promise<OrderHead[]> {
  const items = await querySide(ctx, checkinOrderItemKey(ctx.tenantId, goalUuid, '').PK, { forward: false, consistent: true, limit });
  return items.map((i) => ({ id: i.id as string, orderKey: i.SK }));
}

/** What a check-in command may move its goal to, for the read plan: the check-in's date and value (undefined: not known yet). */
interface MovesGoal {
  date: string;
  value: number | null | undefined;
}

/**
 * The second round of every check-in command's read, after the goal (strongly consistent, with its version): the
 * goal's newest `newest` order items, the caller's access to it and its rollup ancestors (one batch for a chain:
 * the goal's `path` names it), all at once. The order is read after the goal on purpose: a check-in committed
 * before the goal was read is in the order, and one committed after it moves the goal's version, which the write
 * is conditioned on. Read at once, a check-in committing between the two reads could be missing from the order
 * while the goal already follows it; this write would then take the goal's lead from a newer check-in (moving its
 * rollup parents by it), and the stream would set the goal back to the newer one without them.
 */
async function readGoalAround(ctx: DomainCtx, stored: Stored<GoalRecord>, newest: number, moves: MovesGoal): Promise<GoalAround> {
  const [heads, access, ancestors] = await Promise.all([
    newestOf(ctx, stored.record.uuid, newest),
    goalAccess(ctx, stored.record),
    mayMoveParents(stored.record, moves.date, moves.value === undefined ? undefined : goalProgressAt(stored.record, moves.value))
      ? readAncestors(ctx, [stored.record])
      : { stored: new Map(), truncated: false },
  ]);
  return { stored, access, newest: heads, ancestors };
}

/** What a check-in command's transaction wrote (or, replayed, what was stored), before its after-work. */
interface CheckinWritten {
  checkin: CheckinRecord;
  goal: GoalRecord;
  access: GoalAccess;
  /** The goal's rollup ancestors moved in the same transaction (else they are recomputed after it). */
  synced: boolean;
  /** How many rollup ancestors the transaction moved (undefined for a stored record: nothing was written). */
  rollupDepth?: number;
  createdLabels: LabelRecord[];
}

/** Maps a decided check-in write's goal and rollup ancestors into the transaction (unsynced when they would not fit in it). */
function addGoalAndRollups(tx: WriteTx, d: { goal: GoalWriteWithRollups }) {
  const goal = fittedTo(d.goal, tx.size);
  addGoalWrite(tx, goal);
  return { goal: goal.goal, synced: goal.synced, rollupDepth: goal.ancestors.length };
}

/** After the commit: ancestors that could not move in it (one without its aggregate yet) are recomputed before the request returns. */
async function afterCheckinWrite(ctx: DomainCtx, w: CheckinWritten): Promise<CheckinView> {
  if (!w.synced) await refreshRollupsAfterWrite(ctx, [w.goal.uuid]);
  else if (w.rollupDepth !== undefined) reportSignal('rollupDepth', w.rollupDepth); // the operator's RollupDepth metric (not on a replay)
  ctx.loader.prime(goalEntity, w.goal);
  primeLabels(ctx.loader, w.createdLabels);
  return { checkin: w.checkin, goal: w.goal, access: w.access };
}

// ---------- reads ----------

async function storedCheckin(ctx: DataCtx, id: string, consistent = false): Promise<Stored<CheckinRecord>> {
  const stored = await getEntity(ctx, checkinEntity, id, consistent);
  if (!stored) throw checkinNotFound(id);
  return stored;
}

/** GET /checkins/{id}: 404 outside the caller's tenant, 403 when the caller cannot see its goal. */
export async function getCheckin(ctx: DomainCtx, id: string): Promise<CheckinView> {
  const { record } = await storedCheckin(ctx, id);
  const { goal, access } = await readableGoal(ctx, record.goal_uuid);
  return { checkin: record, goal, access };
}

// ---------- writes: read, decide, write ----------

const commandContext = (ctx: DomainCtx) => ({ callerUuid: ctx.caller.userId });

/**
 * The first round of a check-in create's read, which needs no caller (so the route starts it beside the caller's
 * read): the goal named, strongly consistent with its version, beside the name claims of the labels named.
 */
export async function readCheckinGoal(data: DataCtx, loader: Pick<Loader, 'many'>, input: CheckinCreateInput): Promise<CheckinGoalRead> {
  const [goal, labels] = await Promise.all([
    getEntity(data, goalEntity, input.goal_uuid.toLowerCase(), true),
    readLabelNames(data, loader, input.labels ?? []),
  ]);
  return { goal, labels };
}

/** A check-in create's read after its first round: what the goal names, when it is there. */
async function readAroundGoal(ctx: DomainCtx, first: CheckinGoalRead, moves: MovesGoal): Promise<CheckinCreateState> {
  if (!first.goal) return { ...first, goal: undefined };
  return { ...first, goal: first.goal, around: await readGoalAround(ctx, first.goal, 1, moves) };
}

/**
 * `opts.checkinUuid`: the check-in's uuid, derived by a caller that may run the same create again (a data
 * source's sync run): a second run finds the check-in stored and answers it, so one run writes at most one.
 * `opts.started`: readCheckinGoal begun by the route beside the caller's read (the first attempt's first round).
 *
 * Read once (readCheckinGoal, then readAroundGoal: the goal, the label names, the order, the access, the rollup
 * ancestors), decide once (decideCheckinCreate: the check-in, the goal following it, the new labels and every
 * ancestor's aggregate), write once (the runner's one transaction).
 */
export async function createCheckin(
  ctx: DomainCtx,
  input: CheckinCreateInput,
  opts: { checkinUuid?: string; started?: Promise<CheckinGoalRead> } = {},
): Promise<CheckinView> {
  const hidden = () => unknownGoal(input.goal_uuid);
  const ids = { checkin: opts.checkinUuid ?? newId(), labels: (input.labels ?? []).map(() => newId()) };
  const moves = (today: string): MovesGoal => ({ date: input.checkin_date ?? today, value: input.value ?? null });
  return runCommand(ctx, {
    ids,
    // started before the runner fixed its instant: today as the read sees it, which only chooses what to read
    first: opts.started?.then((first) => readAroundGoal(ctx, first, moves(todayUtc(nowIso())))),
    read: async ({ now }) => readAroundGoal(ctx, await readCheckinGoal(ctx, ctx.loader, input), moves(todayUtc(now))),
    decide: (state, now, ids) => decideCheckinCreate(state, input, { ...commandContext(ctx), hidden }, now, ids),
    write: (tx, d): CheckinWritten => {
      tx.create(checkinEntity, d.checkin).putSide(orderKeyOf(ctx, d.checkin), orderItem(d.checkin));
      addLabelCreates(tx, d.createdLabels);
      return { checkin: d.checkin, ...addGoalAndRollups(tx, d), access: d.access, createdLabels: d.createdLabels };
    },
    stored: orStored(checkinEntity, ids.checkin, async (stored): Promise<CheckinWritten> => {
      const { goal, access } = await readableGoal(ctx, stored.goal_uuid);
      return { checkin: stored, goal, access, synced: true, createdLabels: [] };
    }),
    after: (w) => afterCheckinWrite(ctx, w),
  });
}

/**
 * Read plan of a command on one check-in: the check-in, then its goal beside what `extra` reads, then what the goal
 * names (readGoalAround). A retry reads the check-in and its goal at once: a check-in's goal never changes.
 */
function readOnCheckin<X>(
  ctx: DomainCtx,
  id: string,
  newest: number,
  extra: () => Promise<X>,
  value: (current: CheckinRecord) => MovesGoal['value'],
) {
  let goalUuid: string | undefined;
  return async (): Promise<OnCheckinState<X>> => {
    const [current, known] = await Promise.all([
      getEntity(ctx, checkinEntity, id, true),
      goalUuid === undefined ? undefined : Promise.all([getEntity(ctx, goalEntity, goalUuid, true), extra()]),
    ]);
    if (!current) return { current };
    goalUuid = current.record.goal_uuid;
    const [goal, more] = known ?? (await Promise.all([getEntity(ctx, goalEntity, goalUuid, true), extra()]));
    if (!goal) return { current, goal };
    const moves = { date: current.record.checkin_date, value: value(current.record) };
    return { current, goal: await readGoalAround(ctx, goal, newest, moves), extra: more };
  };
}

export async function updateCheckin(ctx: DomainCtx, id: string, input: CheckinUpdateInput): Promise<CheckinView> {
  // new labels' ids are drawn once: every retried attempt names the same labels
  const ids = (input.labels ?? []).map(() => newId());
  const labels = input.labels;
  return runCommand(ctx, {
    ids,
    read: readOnCheckin<LabelNamesRead | undefined>(
      ctx,
      id,
      1,
      async () => (labels === undefined ? undefined : readLabelNames(ctx, ctx.loader, labels)),
      (current) => (input.value !== undefined ? input.value : current.value),
    ),
    decide: (s, now, ids) => decideCheckinUpdate(s, id, input, ids, commandContext(ctx), now),
    write: (tx, d): CheckinWritten => {
      tx.replace(checkinEntity, d.current, d.checkin);
      addLabelCreates(tx, d.createdLabels);
      return { checkin: d.checkin, ...addGoalAndRollups(tx, d), access: d.access, createdLabels: d.createdLabels };
    },
    after: (w) => afterCheckinWrite(ctx, w),
  });
}

/** Hard-deletes a check-in; when it was the goal's latest, the goal follows the one latest afterwards. Returns the deleted record. */
export async function deleteCheckin(ctx: DomainCtx, id: string): Promise<CheckinView> {
  // the goal follows the next latest check-in, not read yet: its value is not known
  const read = readOnCheckin<CheckinRecord | undefined>(
    ctx,
    id,
    2,
    async () => undefined,
    () => undefined,
  );
  return runCommand(ctx, {
    read: async (): Promise<OnCheckinState<CheckinRecord | undefined>> => {
      const s = await read();
      // the check-in that becomes the goal's latest, read only when this one is the latest
      if (!s.current || !s.goal) return s;
      const newest = s.goal.newest;
      const next = deleteNeedsNext(newest, id) ? (await getEntity(ctx, checkinEntity, newest[1]!.id, true))?.record : undefined;
      return { ...s, extra: next };
    },
    decide: (s, now) => decideCheckinDelete(s, id, now),
    write: (tx, d): CheckinWritten => {
      tx.remove(checkinEntity, d.current).deleteSide(orderKeyOf(ctx, d.current.record));
      return { checkin: d.checkin, ...addGoalAndRollups(tx, d), access: d.access, createdLabels: [] };
    },
    after: (w) => afterCheckinWrite(ctx, w),
  });
}

const orderKeyOf = (ctx: DataCtx, c: CheckinRecord) => checkinOrderItemKey(ctx.tenantId, c.goal_uuid, checkinOrderKey(c));
const orderItem = (c: CheckinRecord) => ({ id: c.uuid, kind: 'checkin_order' });
