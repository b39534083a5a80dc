/** Goal update: inside the goal's optimistic loop, read what changed, decide, one transaction; then rollups and paths. */
import { getEntities, getEntity, mutateEntity, nowIso, WriteTx, type Stored } from '#shared/db/store.ts';
import { newId } from '#shared/ids.ts';
import { sentFields } from '#shared/domain/fields.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalAccess } from '#shared/domain/goals/access.ts';
import { goalEntity, type GoalKind, type GoalRecord, type MetricRecord, type ParentLink } from '#shared/domain/goals/entity.ts';
import { pathFor, walkDescendants } from '#shared/domain/goals/hierarchy.ts';
import { goalProgressAt, refreshRollups } from '#shared/domain/goals/progress.ts';
import { primeLabels } from '#shared/domain/goals/present.ts';
import type { LabelRecord } from '#shared/domain/labels/entity.ts';
import { labelsForNames } from '#shared/domain/labels/service.ts';
import { type ErrorDetail } from '#shared/errors.ts';
import { assertFits, delegatesOf, dateDetails, fail, heaviestField, metricDetails, normalizeShortId, parentLinksOf, searchableContent, uniq, visibleEntitiesOf, type ParentInput } from '#shared/domain/goals/rules.ts';
import { guardHierarchy, parentDetails, periodOf, referenceDetails, requireUnchanged } from '#shared/domain/goals/reads.ts';
import { notFound, requireEditable, type GoalUpdateInput, type GoalView } from '#shared/domain/goals/service.ts';

const replaceCost = (ctx: DomainCtx, before: Stored<GoalRecord>, after: GoalRecord) => new WriteTx(ctx).replace(goalEntity, before, after).size;

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
    const current: MetricRecord = g.metric ?? { uuid: newId(), name: null, start_value: 0, target_value: 0, unit: null, metric_type: 'reach' };
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
        if (shortId !== g.short_id) Object.assign(next, { short_id: shortId, short_id_uuid: shortId ? newId() : null });
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
      if (next.current_progress !== g.current_progress) next.progress_cause = { cause: 'metric_changed', at: now }; // history: the metric or mode moved progress
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
