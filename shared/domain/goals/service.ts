/**
 * Goals (objectives, key results, initiatives): domain rules. One implementation for the three kinds; the
 * kind comes from the route. Decisions are listed in shared/domain/goals/README.md.
 *
 * Every write is one TransactWriteItems: the goal item, its index entries, its short_id claim, the labels
 * it creates, and condition checks on what it references. A write that would need more than 100 items is
 * refused (422 too_many) rather than split, so nothing is ever half-applied.
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { requireContentWriter } from '#shared/auth/permissions.ts';
import { getEntities, getEntity, getSide, mutateEntity, nowIso, retryOnConflict, WriteTx, type Stored } from '#shared/db/store.ts';
import { sentFields } from '#shared/domain/fields.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { editableGoal, goalAccess, readableGoal, requireGoalEditor, type GoalAccess } from '#shared/domain/goals/access.ts';
import { goalEntity, GOAL_KINDS, hierarchyGuardKey, type GoalKind, type GoalRecord, type MetricRecord, type ParentLink, type VisibleEntity } from '#shared/domain/goals/entity.ts';
import { childEntriesOfKind, closesCycle, pathFor, walkDescendants } from '#shared/domain/goals/hierarchy.ts';
import { goalProgressAt, refreshRollups } from '#shared/domain/goals/progress.ts';
import { primeLabels } from '#shared/domain/goals/present.ts';
import type { LabelRecord } from '#shared/domain/labels/entity.ts';
import { labelsForNames } from '#shared/domain/labels/service.ts';
import { teamEntity } from '#shared/domain/teams/entity.ts';
import type { TimePeriodRecord } from '#shared/domain/time-periods/entity.ts';
import { getTimePeriod } from '#shared/domain/time-periods/service.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import { ForbiddenError, MAX_TRANSACTION_ITEMS, NotFoundError, TooManyWritesError, ValidationError, type ErrorDetail } from '#shared/errors.ts';
import type { GoalCreateBody, GoalDeleteBody, GoalUpdateBody } from '#shared/schemas/goals.ts';

export type GoalCreateInput = z.infer<typeof GoalCreateBody>;
export type GoalUpdateInput = z.infer<typeof GoalUpdateBody>;
export type GoalDeleteInput = z.infer<typeof GoalDeleteBody>;

/** A goal with what the caller may do with it (for `checks` and `access_source`). */
export interface GoalView {
  goal: GoalRecord;
  access: GoalAccess;
}

const MAX_TX_ITEMS = MAX_TRANSACTION_ITEMS;
const SHORT_ID = /^[A-Za-z0-9_-]{2,30}$/;

const uniq = (ids: readonly string[] | null | undefined) => [...new Set(ids ?? [])];

type ParentInput = string | { parent_uuid: string; contribution_percent?: number };

/** The body's parents as links (first mention of a uuid wins); `contribution_percent` undefined = not given. */
function parentLinksOf(parents: readonly ParentInput[] | null | undefined): Array<{ parent_uuid: string; contribution_percent?: number }> {
  const links = new Map<string, { parent_uuid: string; contribution_percent?: number }>();
  for (const p of parents ?? []) {
    const link = typeof p === 'string' ? { parent_uuid: p } : p;
    if (!links.has(link.parent_uuid)) links.set(link.parent_uuid, link);
  }
  return [...links.values()];
}

function fail(details: ErrorDetail[]): void {
  if (details.length) throw new ValidationError(details.map((d) => (d.field ? `${d.field}: ${d.message}` : d.message)).join('; '), details);
}

/**
 * The last resort when a write would not fit one transaction. The caps of GOAL_LIMITS make every create and
 * update within them fit (shared/schemas/goals.ts), so this answers only a goal stored with more
 * associations than today's caps, or a delete of too many goals at once. `field` names what to send less of.
 */
const tooMany = (field: string) => new TooManyWritesError(field);

function assertFits(items: number, field: () => string): void {
  if (items > MAX_TX_ITEMS) throw tooMany(field());
}

/** Item cost of each association field sent, per element (see GOAL_WRITE_ITEMS), largest first: the field a too_many names. */
const ITEM_WEIGHTS: Array<[keyof GoalUpdateInput, number]> = [['parents', 5], ['labels', 4], ['team_uuids', 3], ['owner_uuids', 2], ['delegate_uuids', 2]];
function heaviestField(input: GoalCreateInput | GoalUpdateInput): string {
  const sent = input as Record<string, unknown>;
  const weighed = ITEM_WEIGHTS.map(([f, w]) => [f, w * (Array.isArray(sent[f]) ? (sent[f] as unknown[]).length : 0)] as const).sort((a, b) => b[1] - a[1]);
  if (weighed[0]![1] > 0) return weighed[0]![0];
  // nothing big sent: a change that re-writes every index entry of a goal stored with more than today's caps
  const keys = Object.keys(sentFields(sent));
  return ['visibility', 'time_period_uuid', 'short_id'].find((f) => keys.includes(f)) ?? keys[0] ?? 'visibility';
}

/** Items the `tx.replace` of the goal will add: the item and only the entries and claims that change. */
const replaceCost = (ctx: DomainCtx, before: Stored<GoalRecord>, after: GoalRecord) => new WriteTx(ctx).replace(goalEntity, before, after).size;

// ---------- rules on the body ----------

/** The time period a goal names: 422 when it is not one of the tenant's. */
async function periodOf(ctx: DomainCtx, uuid: string): Promise<TimePeriodRecord> {
  const period = await getTimePeriod(ctx, uuid);
  if (!period) throw ValidationError.field('time_period_uuid', 'not_found', `time_period_uuid ${uuid} is not a time period of this tenant`);
  return period;
}

/** Spec rules 1-2: both dates inside the period (inclusive) and start on or before end. */
function dateDetails(period: TimePeriodRecord, start: string, end: string, sent: { start_date?: string; end_date?: string }): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const [field, value] of [['start_date', start], ['end_date', end]] as const) {
    if (value < period.start_date || value > period.end_date) {
      details.push({ field, code: 'out_of_range', message: `${field} ${value} must fall within the time period (${period.start_date} to ${period.end_date})` });
    }
  }
  if (start > end) {
    // name the date(s) the client sent; with neither sent (a period change) both are the period's and cannot be out of order
    const fields = (['start_date', 'end_date'] as const).filter((f) => sent[f] !== undefined);
    for (const field of fields.length ? fields : (['start_date'] as const)) {
      details.push({ field, code: 'order', message: `start_date ${start} must be on or before end_date ${end}` });
    }
  }
  return details;
}

/** Owners, delegates, teams and visible entities must exist in the caller's tenant; each bad uuid is named. */
async function referenceDetails(
  ctx: DomainCtx,
  refs: { owner_uuids?: string[]; delegate_uuids?: string[]; team_uuids?: string[]; visible_entities?: VisibleEntity[] },
): Promise<ErrorDetail[]> {
  const userIds = uniq([...(refs.owner_uuids ?? []), ...(refs.delegate_uuids ?? []), ...(refs.visible_entities ?? []).filter((e) => e.entity_type === 'user').map((e) => e.entity_uuid)]);
  const teamIds = uniq([...(refs.team_uuids ?? []), ...(refs.visible_entities ?? []).filter((e) => e.entity_type === 'team').map((e) => e.entity_uuid)]);
  const [users, teams] = await Promise.all([ctx.loader.many(userEntity, userIds), ctx.loader.many(teamEntity, teamIds)]);
  const knownUsers = new Set(users.map((u) => u.uuid));
  const knownTeams = new Set(teams.map((t) => t.uuid));
  const details: ErrorDetail[] = [];
  const check = (field: string, ids: string[] | undefined, known: Set<string>, what: string) => {
    for (const id of uniq(ids)) if (!known.has(id)) details.push({ field, code: 'not_found', message: `${id} is not a ${what} of this tenant` });
  };
  check('owner_uuids', refs.owner_uuids, knownUsers, 'user');
  check('delegate_uuids', refs.delegate_uuids, knownUsers, 'user');
  check('team_uuids', refs.team_uuids, knownTeams, 'team');
  for (const e of refs.visible_entities ?? []) {
    const known = e.entity_type === 'user' ? knownUsers : knownTeams;
    if (!known.has(e.entity_uuid)) details.push({ field: 'visible_entities', code: 'not_found', message: `${e.entity_uuid} is not a ${e.entity_type} of this tenant` });
  }
  return details;
}

/**
 * New parents: goals of the tenant the caller can see (an invisible one reads as unknown, so the answer
 * does not reveal it exists), not deleted, and neither the goal itself nor one of its descendants. The
 * cycle check walks up from each parent through goal records, read afresh on every attempt of the write
 * (a request-wide cache could hold a line read before a lost race).
 */
async function parentDetails(ctx: DomainCtx, goalUuid: string | undefined, added: string[]): Promise<{ details: ErrorDetail[]; parents: Map<string, Stored<GoalRecord>> }> {
  const details: ErrorDetail[] = [];
  const parents = await getEntities(ctx, goalEntity, added.filter((id) => id !== goalUuid), true);
  const lines = new Loader(ctx, true);
  for (const id of added) {
    if (id === goalUuid) {
      details.push({ field: 'parents', code: 'cycle', message: 'A goal cannot be its own parent' });
      continue;
    }
    const p = parents.get(id)?.record;
    const access = p && (await goalAccess(ctx, p));
    if (!p || !access?.canView) details.push({ field: 'parents', code: 'not_found', message: `${id} is not a goal of this tenant` });
    // contract 5: a parent's progress is its owners' to decide; placing a goal under it needs the right to update it
    else if (!access.canEdit) throw new ForbiddenError(`You cannot place a goal under ${id}: you cannot update that goal`);
    else if (p.discarded_at) details.push({ field: 'parents', code: 'discarded', message: `${id} is a deleted goal` });
    else if (goalUuid && (await closesCycle(goalUuid, p, lines))) details.push({ field: 'parents', code: 'cycle', message: `${id} is below this goal: linking it as a parent would make a cycle` });
  }
  return { details, parents };
}

/** Metric rules (contract 6): progress must be computable for the metric type. */
function metricDetails(m: MetricRecord | null): ErrorDetail[] {
  if (!m) return [];
  if (m.metric_type === 'reach' && m.start_value === m.target_value) {
    return [{ field: 'metric.target_value', code: 'invalid', message: 'A reach metric needs target_value different from start_value' }];
  }
  if (m.metric_type === 'stay_between' && m.start_value > m.target_value) {
    return [{ field: 'metric.target_value', code: 'invalid', message: 'A stay_between metric needs start_value (lower bound) on or before target_value (upper bound)' }];
  }
  return [];
}

/** The earlier variant's `delegate_uuid` (one delegate or null) or `delegate_uuids`; not both. */
function delegatesOf(input: { delegate_uuids?: string[] | null; delegate_uuid?: string | null }): string[] | undefined {
  if (input.delegate_uuids !== undefined && input.delegate_uuid !== undefined) {
    throw ValidationError.field('delegate_uuid', 'conflict', 'Send delegate_uuids or delegate_uuid (earlier variant), not both');
  }
  if (input.delegate_uuid !== undefined) return input.delegate_uuid ? [input.delegate_uuid] : [];
  return input.delegate_uuids === undefined ? undefined : uniq(input.delegate_uuids);
}

/** One entry per (entity_type, entity_uuid), the last one sent winning; mode defaults to view. */
function visibleEntitiesOf(list: Array<{ entity_type: 'user' | 'team'; entity_uuid: string; mode?: 'view' | 'edit' }> | null | undefined): VisibleEntity[] {
  const byKey = new Map<string, VisibleEntity>();
  for (const e of list ?? []) byKey.set(`${e.entity_type}:${e.entity_uuid.toLowerCase()}`, { entity_type: e.entity_type, entity_uuid: e.entity_uuid, mode: e.mode ?? 'view' });
  return [...byKey.values()];
}

/** Lower-cased title, description and short_id: one field a client can search with `_cont`. */
const searchableContent = (g: Pick<GoalRecord, 'title' | 'description' | 'short_id'>) => [g.title, g.description, g.short_id].filter((s) => s).join(' ').toLowerCase();

/** Spec rule 4: 2-30 letters, digits, dashes or underscores, stored upper-case (uniqueness is the entity's claim). */
function normalizeShortId(raw: string | null): string | null {
  if (raw === null) return null;
  if (!SHORT_ID.test(raw)) throw ValidationError.field('short_id', 'malformed', 'short_id must be 2-30 letters, digits, dashes or underscores');
  return raw.toUpperCase();
}

/**
 * New parents must be as read when the goal's write commits: a concurrent write that deletes a parent or
 * links it below this goal (a two-goal cycle) then conflicts, and the retry reads it again and refuses.
 */
function requireUnchanged(tx: WriteTx, parents: Iterable<Stored<GoalRecord>>): void {
  for (const s of parents) tx.checkVersion(goalEntity, s);
}

/**
 * The tenant's hierarchy guard: a side item whose version every parent-adding update reads before its cycle
 * walk and bumps in its transaction (docs/data-model.md). A create needs none: a new goal has no descendants.
 */
async function guardHierarchy(ctx: DomainCtx, tx: WriteTx): Promise<void> {
  const key = hierarchyGuardKey(ctx.tenantId);
  const read = (await getSide(ctx, key))?.v as number | undefined;
  tx.putSide(key, { kind: 'goal_hierarchy_guard', v: (read ?? 0) + 1 }, { if: read === undefined ? { exists: false } : { equals: { v: read } } });
}

// ---------- reads ----------

export async function getGoal(ctx: DomainCtx, kind: GoalKind, id: string): Promise<GoalView> {
  const { goal, access } = await readableGoal(ctx, id, kind);
  return { goal, access };
}

// ---------- create ----------

export async function createGoal(ctx: DomainCtx, kind: GoalKind, input: GoalCreateInput): Promise<GoalView> {
  requireContentWriter(ctx.caller);
  const delegates = delegatesOf(input) ?? [];
  const owners = uniq(input.owner_uuids);
  const teams = uniq(input.team_uuids);
  const visible = visibleEntitiesOf(input.visible_entities);
  const parentLinks = parentLinksOf(input.parents);
  const parentIds = parentLinks.map((l) => l.parent_uuid);
  const period = await periodOf(ctx, input.time_period_uuid);
  const start = input.start_date ?? period.start_date;
  const end = input.end_date ?? period.end_date;
  const metric: MetricRecord | null = input.metric
    ? { uuid: randomUUID(), name: input.metric.name ?? null, start_value: input.metric.start_value ?? 0, target_value: input.metric.target_value, unit: input.metric.unit ?? null, metric_type: input.metric.metric_type ?? 'reach' }
    : null;
  const refs = referenceDetails(ctx, { owner_uuids: owners, delegate_uuids: delegates, team_uuids: teams, visible_entities: visible });

  const now = nowIso();
  const uuid = randomUUID();
  const base: GoalRecord = {
    uuid,
    type: kind,
    title: input.title,
    description: input.description ?? null,
    start_date: start,
    end_date: end,
    goal_type: input.goal_type ?? 'aspirational',
    time_period_uuid: period.uuid,
    current_metric_uuid: metric?.uuid ?? null,
    metric,
    creator_uuid: ctx.caller.userId,
    last_checkin_date: null,
    score: null,
    current_progress: null, // no value yet
    current_value: null,
    current_status: 'not_started',
    status: null, // presented from current_status (earlier-variant name)
    source_uuid: null,
    source_type: null,
    path: uuid, // below its first parent once the parents are read
    searchable_content: null,
    progress_mode: 'manual',
    value_updated_at: null,
    status_updated_at: null,
    value_updated_by_uuid: null,
    status_updated_by_uuid: null,
    visibility: input.visibility ?? 'public',
    ai_rollup_enabled: false,
    data_sources_count: 0,
    discarded_at: null,
    discarded_by_uuid: null,
    short_id: null,
    short_id_uuid: null,
    archived_at: null,
    archived_by_uuid: null,
    owner_uuids: owners,
    team_uuids: teams,
    label_uuids: [],
    delegate_uuids: delegates,
    parent_links: parentLinks.map((l) => ({ parent_uuid: l.parent_uuid, contribution_percent: l.contribution_percent ?? 100 })),
    visible_entities: visible,
    checkin_due_days: input.checkin_due_days ?? null,
    partner_goals_external_id: null,
    created_at: now,
    updated_at: now,
  };
  base.searchable_content = searchableContent(base);

  // Retried when a parent changed before the commit (then read again: deleted meanwhile is 422), or a label
  // this request creates was created concurrently by another one (then reused).
  const { goal, labels } = await retryOnConflict(async () => {
    const [refDetails, parentCheck] = await Promise.all([refs, parentDetails(ctx, undefined, parentIds)]);
    fail([...dateDetails(period, start, end, input), ...refDetails, ...parentCheck.details, ...metricDetails(metric)]);
    const tx = new WriteTx(ctx);
    requireUnchanged(tx, parentCheck.parents.values());
    const labels = await labelsForNames(ctx, input.labels ?? [], tx);
    const record: GoalRecord = { ...base, path: pathFor(uuid, parentCheck.parents.get(parentIds[0]!)?.record), label_uuids: uniq(labels.map((l) => l.uuid)) };
    tx.create(goalEntity, record);
    assertFits(tx.size, () => heaviestField(input));
    await tx.commit();
    return { goal: record, labels };
  });
  ctx.loader.prime(goalEntity, goal);
  primeLabels(ctx, labels);
  if (goal.parent_links.length) await refreshRollups(ctx, [goal]);
  return { goal, access: await goalAccess(ctx, goal) };
}

// ---------- update ----------

type Change = { details: ErrorDetail[] };

/** Rules 1-3 on update: a new period resets the dates not sent to its own; any date change is checked against the period. */
async function applyPeriod(ctx: DomainCtx, tx: WriteTx, g: GoalRecord, next: GoalRecord, input: GoalUpdateInput): Promise<Change> {
  const periodChanged = input.time_period_uuid !== undefined && input.time_period_uuid !== g.time_period_uuid;
  if (!periodChanged && input.start_date === undefined && input.end_date === undefined) return { details: [] };
  const period = await periodOf(ctx, input.time_period_uuid ?? g.time_period_uuid);
  next.time_period_uuid = period.uuid;
  next.start_date = input.start_date ?? (periodChanged ? period.start_date : g.start_date);
  next.end_date = input.end_date ?? (periodChanged ? period.end_date : g.end_date);
  return { details: dateDetails(period, next.start_date, next.end_date, input) };
}

/**
 * New parent list: links kept keep their contribution; new ones are checked (existence, visibility, cycles).
 * Adding a parent to an existing goal is serialized per tenant through the hierarchy guard (read before the
 * cycle walk, bumped in the write's transaction): two concurrent re-parentings that would together close a
 * cycle cannot both commit on walks that each missed the other's link; the loser re-reads and refuses.
 */
async function applyParents(ctx: DomainCtx, tx: WriteTx, g: GoalRecord, next: GoalRecord, parents: ParentInput[] | null): Promise<Change & { removed: string[] }> {
  const links = parentLinksOf(parents);
  const ids = links.map((l) => l.parent_uuid);
  const added = ids.filter((p) => !g.parent_links.some((l) => l.parent_uuid === p));
  if (added.length) await guardHierarchy(ctx, tx);
  const check = await parentDetails(ctx, g.uuid, added);
  next.parent_links = links.map(
    (l): ParentLink => ({ parent_uuid: l.parent_uuid, contribution_percent: l.contribution_percent ?? g.parent_links.find((k) => k.parent_uuid === l.parent_uuid)?.contribution_percent ?? 100 }),
  );
  requireUnchanged(tx, check.parents.values());
  const first = ids[0];
  if (first !== g.parent_links[0]?.parent_uuid) {
    const parent = first ? (check.parents.get(first) ?? (await getEntity(ctx, goalEntity, first))) : undefined;
    next.path = pathFor(g.uuid, parent?.record);
  }
  return { details: check.details, removed: g.parent_links.map((l) => l.parent_uuid).filter((p) => !ids.includes(p)) };
}

/**
 * `metric` on update: merged onto the current metric (same uuid), a new metric when there is none (then
 * target_value is required), null removes it. A changed metric re-reads progress from the current value,
 * except in rollup mode where progress is the children's.
 */
function applyMetric(g: GoalRecord, next: GoalRecord, input: NonNullable<GoalUpdateInput['metric']> | null): Change {
  const details: ErrorDetail[] = [];
  if (input === null) next.metric = null;
  else {
    if (!g.metric && input.target_value === undefined) details.push({ field: 'metric.target_value', code: 'required', message: 'A new metric needs target_value' });
    const current: MetricRecord = g.metric ?? { uuid: randomUUID(), name: null, start_value: 0, target_value: 0, unit: null, metric_type: 'reach' };
    next.metric = { ...current, ...sentFields(input) };
    details.push(...metricDetails(next.metric));
  }
  next.current_metric_uuid = next.metric?.uuid ?? null;
  if (JSON.stringify(next.metric) !== JSON.stringify(g.metric) && next.progress_mode !== 'rollup') {
    next.current_progress = goalProgressAt(next, next.current_value); // a removed metric reads the value as a percentage
  }
  return { details };
}

export async function updateGoal(ctx: DomainCtx, kind: GoalKind, id: string, input: GoalUpdateInput): Promise<GoalView> {
  let removedParents: string[] = [];
  let labels: LabelRecord[] = [];
  const { before, after } = await mutateEntity(
    ctx,
    goalEntity,
    id,
    async (current, tx) => {
      const g = current.record;
      await requireEditable(ctx, kind, g);
      const now = nowIso();
      const { title, description, goal_type, visibility, checkin_due_days, progress_mode } = input;
      const next: GoalRecord = { ...g, ...sentFields({ title, description, goal_type, visibility, checkin_due_days, progress_mode }), updated_at: now };
      // Leaving rollup mode: progress follows the goal's own value again.
      if (g.progress_mode === 'rollup' && next.progress_mode !== 'rollup') next.current_progress = goalProgressAt(next, next.current_value);
      if (input.current_status !== undefined && input.current_status !== g.current_status) {
        Object.assign(next, { current_status: input.current_status, status_updated_at: now, status_updated_by_uuid: ctx.caller.userId });
      }
      if (input.short_id !== undefined) {
        const shortId = normalizeShortId(input.short_id);
        if (shortId !== g.short_id) Object.assign(next, { short_id: shortId, short_id_uuid: shortId ? randomUUID() : null });
      }
      const delegates = delegatesOf(input);
      if (delegates !== undefined) next.delegate_uuids = delegates;
      if (input.owner_uuids !== undefined) next.owner_uuids = uniq(input.owner_uuids);
      if (input.team_uuids !== undefined) next.team_uuids = uniq(input.team_uuids);
      if (input.visible_entities !== undefined) next.visible_entities = visibleEntitiesOf(input.visible_entities);

      const details = [
        ...(await applyPeriod(ctx, tx, g, next, input)).details,
        ...(await referenceDetails(ctx, {
          owner_uuids: input.owner_uuids === undefined ? undefined : next.owner_uuids,
          delegate_uuids: delegates,
          team_uuids: input.team_uuids === undefined ? undefined : next.team_uuids,
          // entities already on the goal are kept as they are: a round trip of the goal's own list never fails
          // on a team deleted since it was named (it grants nothing any more: README)
          visible_entities: input.visible_entities === undefined ? undefined : next.visible_entities.filter((e) => !g.visible_entities.some((o) => o.entity_type === e.entity_type && o.entity_uuid.toLowerCase() === e.entity_uuid.toLowerCase())),
        })),
      ];
      if (input.parents !== undefined) {
        const change = await applyParents(ctx, tx, g, next, input.parents);
        details.push(...change.details);
        removedParents = change.removed;
      }
      if (input.metric !== undefined) details.push(...applyMetric(g, next, input.metric).details);
      fail(details);

      if (input.labels !== undefined) {
        labels = await labelsForNames(ctx, input.labels ?? [], tx);
        next.label_uuids = uniq(labels.map((l) => l.uuid));
      }
      next.searchable_content = searchableContent(next);
      assertFits(tx.size + replaceCost(ctx, current, next), () => heaviestField(input));
      return next;
    },
    () => notFound(kind, id),
  );

  primeLabels(ctx, labels);
  const g = before.record;
  const rollupInputsChanged =
    JSON.stringify(g.parent_links) !== JSON.stringify(after.parent_links) || JSON.stringify(g.metric) !== JSON.stringify(after.metric) || g.progress_mode !== after.progress_mode;
  let goal = after;
  if (rollupInputsChanged) {
    // the goal itself (when in rollup mode), its ancestors, and the parents it left; a rollup goal's own
    // progress was just recomputed: answer with it
    goal = (await refreshRollups(ctx, [after, ...removedParents])).get(after.uuid) ?? after;
  }
  if (after.path !== g.path) await refreshDescendantPaths(ctx, after);
  return { goal, access: await goalAccess(ctx, goal) };
}

/**
 * Same answers as readableGoal/editableGoal, on a record already read inside a write's read-modify-write
 * loop (so the goal item is read once): 404 other kind, 403 not visible or not editable, 422 deleted.
 */
async function requireEditable(ctx: DomainCtx, kind: GoalKind, g: GoalRecord): Promise<GoalAccess> {
  if (g.type !== kind) throw notFound(kind, g.uuid);
  const access = await requireGoalEditor(ctx, g);
  if (g.discarded_at) throw ValidationError.field('discarded_at', 'discarded', 'This goal is deleted; it cannot be changed');
  return access;
}

const notFound = (kind: GoalKind, id: string) => new NotFoundError(kind.replace('_', ' '), id);

/**
 * Keeps `path` true below a goal whose first-parent line changed: each descendant whose own first parent
 * is the goal or a rewritten descendant gets the new prefix. `path` is derived data, so this runs after the
 * goal's write (not in its transaction, which a large subtree would not fit) and is bounded.
 */
const MAX_PATH_REWRITES = 500;
async function refreshDescendantPaths(ctx: DomainCtx, root: GoalRecord): Promise<void> {
  const walk = await walkDescendants(ctx, [root.uuid], { limit: MAX_PATH_REWRITES });
  const goals = await getEntities(ctx, goalEntity, walk.ids);
  const paths = new Map<string, string | null>([[root.uuid, root.path]]);
  const pathOf = (id: string, depth = 0): string | null | undefined => {
    if (paths.has(id)) return paths.get(id);
    const g = goals.get(id)?.record;
    const first = g?.parent_links[0]?.parent_uuid;
    if (!g || !first || depth > 100 || (first !== root.uuid && !goals.has(first))) return undefined; // first-parent line does not pass through root
    const parentPath = pathOf(first, depth + 1);
    const p = parentPath === undefined ? undefined : `${parentPath ?? first}/${id}`;
    if (p !== undefined) paths.set(id, p);
    return p;
  };
  for (const id of walk.ids) {
    const p = pathOf(id);
    if (p === undefined || goals.get(id)?.record.path === p) continue;
    await mutateEntity(ctx, goalEntity, id, (cur) => (cur.record.path === p ? undefined : { ...cur.record, path: p }), () => notFound(goals.get(id)!.record.type, id)).catch((err) => {
      ctx.log.warn('goal path refresh failed', { goal_uuid: id, error: String(err) });
    });
  }
}

// ---------- delete (soft) ----------

const IMMEDIATE_FLAGS: Record<GoalKind, keyof GoalDeleteInput> = {
  objective: 'including_immediate_objectives',
  key_result: 'including_immediate_key_results',
  initiative: 'including_immediate_initiatives',
};

/**
 * Contract 6: a soft delete. The flags add the direct children of a kind, or (delete_hierarchy) every
 * descendant. The caller must be allowed to change each goal discarded (403 naming the first it may not);
 * goals already deleted are left as they are. All in one transaction: a hierarchy that does not fit is
 * refused with 422 too_many and nothing is deleted. Returns the goal as stored after the delete.
 */
export async function deleteGoal(ctx: DomainCtx, kind: GoalKind, id: string, input: GoalDeleteInput): Promise<GoalRecord> {
  const result = await retryOnConflict(async () => {
    const { goal, version } = await editableGoal(ctx, id, kind);
    const others = new Set<string>();
    if (input.delete_hierarchy) {
      // each discarded goal is at least two items (the goal and its re-enveloped entries): 100 descendants never fit
      const walk = await walkDescendants(ctx, [id], { limit: MAX_TX_ITEMS });
      if (walk.truncated) throw tooMany('delete_hierarchy');
      walk.ids.forEach((c) => others.add(c));
    }
    const kinds = GOAL_KINDS.filter((k) => input[IMMEDIATE_FLAGS[k]]);
    for (const entries of await Promise.all(kinds.map((k) => childEntriesOfKind(ctx, k, id)))) entries.forEach((e) => others.add(e.id));
    others.delete(id);

    const stored = await getEntities(ctx, goalEntity, others);
    stored.set(id, { record: goal, version });
    const now = nowIso();
    const tx = new WriteTx(ctx);
    const discarded: GoalRecord[] = [];
    for (const gid of [id, ...others]) {
      const s = stored.get(gid);
      if (!s || s.record.discarded_at) continue;
      if (gid !== id) {
        const access = await goalAccess(ctx, s.record);
        // a goal the caller cannot see is not named (contract 5): its uuid would reveal it
        if (!access.canEdit) throw new ForbiddenError(access.canView ? `You cannot delete ${s.record.type.replace('_', ' ')} ${gid} of this hierarchy` : 'You cannot delete every goal of this hierarchy');
      }
      const next = { ...s.record, discarded_at: now, discarded_by_uuid: ctx.caller.userId, updated_at: now };
      tx.replace(goalEntity, s, next);
      discarded.push(next);
    }
    assertFits(tx.size, () => (input.delete_hierarchy ? 'delete_hierarchy' : IMMEDIATE_FLAGS[kinds[0] ?? kind]));
    await tx.commit();
    return { goal: discarded.find((g) => g.uuid === id) ?? goal, discarded };
  });
  if (result.discarded.length) await refreshRollups(ctx, result.discarded);
  return result.goal;
}

// ---------- archive (extension) ----------

/** Sets (archive) or clears (unarchive) archived_at/archived_by_uuid; doing it twice changes nothing. */
export async function setArchived(ctx: DomainCtx, kind: GoalKind, id: string, archived: boolean): Promise<GoalView> {
  const { before, after } = await mutateEntity(
    ctx,
    goalEntity,
    id,
    async (current) => {
      const g = current.record;
      await requireEditable(ctx, kind, g);
      if (!!g.archived_at === archived) return undefined;
      const now = nowIso();
      return { ...g, archived_at: archived ? now : null, archived_by_uuid: archived ? ctx.caller.userId : null, updated_at: now };
    },
    () => notFound(kind, id),
  );
  // archived children leave their parents' rollup
  if (after !== before.record) await refreshRollups(ctx, [after]);
  return { goal: after, access: await goalAccess(ctx, after) };
}
