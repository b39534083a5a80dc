/** Goal create: read (period, references, parents, labels), decide (rules.ts), one transaction; then rollups. */
import { requireContentWriter } from '#shared/auth/permissions.ts';
import { newId } from '#shared/ids.ts';
import { createdOrStored, nowIso, retryOnConflict, WriteTx } from '#shared/db/store.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalAccess } from '#shared/domain/goals/access.ts';
import { goalEntity, type GoalKind, type GoalRecord, type MetricRecord } from '#shared/domain/goals/entity.ts';
import { pathFor } from '#shared/domain/goals/hierarchy.ts';
import { refreshRollups } from '#shared/domain/goals/progress.ts';
import { primeLabels } from '#shared/domain/goals/present.ts';
import { labelsForNames } from '#shared/domain/labels/service.ts';
import { assertFits, delegatesOf, dateDetails, fail, heaviestField, metricDetails, parentLinksOf, searchableContent, uniq, visibleEntitiesOf } from '#shared/domain/goals/rules.ts';
import { parentDetails, periodOf, referenceDetails, requireUnchanged } from '#shared/domain/goals/reads.ts';
import { type GoalCreateInput, type GoalView } from '#shared/domain/goals/service.ts';


/** `opts.uuid`: the new goal's uuid when the caller fixes it (a bulk import, so a retry finds what it created). */
export async function createGoal(ctx: DomainCtx, kind: GoalKind, input: GoalCreateInput, opts: { uuid?: string } = {}): Promise<GoalView> {
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
    ? { uuid: newId(), name: input.metric.name ?? null, start_value: input.metric.start_value ?? 0, target_value: input.metric.target_value, unit: input.metric.unit ?? null, metric_type: input.metric.metric_type ?? 'reach' }
    : null;
  const refs = referenceDetails(ctx, { owner_uuids: owners, delegate_uuids: delegates, team_uuids: teams, visible_entities: visible });

  const now = nowIso();
  const uuid = opts.uuid ?? newId();
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
  const { goal, labels } = await createdOrStored(ctx, goalEntity, uuid, () => retryOnConflict(async () => {
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
  }), (stored) => ({ goal: stored, labels: [] }));
  ctx.loader.prime(goalEntity, goal);
  primeLabels(ctx, labels);
  if (goal.parent_links.length) await refreshRollups(ctx, [goal]);
  return { goal, access: await goalAccess(ctx, goal) };
}
