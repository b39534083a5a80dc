import type { z } from 'zod';
import { canWriteContent, isAdmin } from '#shared/auth/caller.ts';
import { listEntryOf } from '#shared/db/model.ts';
import type { AccessSource, Checks } from '#shared/auth/permissions.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalEntryVisibility } from '#shared/domain/goals/access.ts';
import type { GoalAccess } from '#shared/domain/goals/refusals.ts';
import { recordResponse } from '#shared/http/respond.ts';
import type { GoalRecordSchema } from '#shared/schemas/goals.ts';
import { goalEntity, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { paceFields } from '#shared/domain/goals/pace.ts';
import { todayUtc } from '#shared/clock.ts';
import { labelEntity, type LabelRef } from '#shared/domain/labels/entity.ts';
import { currentLabels, type Labelled } from '#shared/domain/labels/decide.ts';
import type { Loader } from '#shared/list/entity-cache.ts';

/**
 * Goal presentation, above the domain: the one presenter of the goal record, used by every route that
 * returns a goal (and by outbound events).
 *
 * The goal record as every endpoint returns it: every field of the spec's goal record (null when unset),
 * both delegate variants, and `team_uuids`, `labels` ({uuid, name}), `created_at`, `updated_at`.
 * `status` is the earlier-variant name of `current_status`; `target`/`unit`/`metric_type` mirror the
 * current metric. Labels are presented from the names the goal keeps (`labels`, kept right by the change
 * stream when a label is renamed or deleted), so presenting reads nothing more; only goals written before names
 * were kept name theirs by one batch read for the whole page (distinct labels only).
 */
export async function presentGoals(ctx: DomainCtx, goals: GoalRecord[], today = todayUtc()) {
  const [labels, hidden] = await Promise.all([labelNamer(ctx.loader, goals), hiddenAncestors(ctx, goals)]);
  return goals.map((g) => presentGoal(withoutHidden(g, hidden), labels, today));
}

/** Goal records as an admin sees them (every parent, the whole path): for outbound events, which go to admin-registered endpoints. */
export async function presentGoalsInFull(loader: Loader, goals: GoalRecord[], today = todayUtc()) {
  const labels = await labelNamer(loader, goals);
  return goals.map((g) => presentGoal(g, labels, today));
}

/**
 * Contract 5: a goal the caller may not see is left out of every other record. The parents and first-parent
 * line (`path`) of a page's goals are read in one batch and judged as lists judge them (the envelope's
 * visibility and ACL); admins see everything, so nothing is read for them.
 */
async function hiddenAncestors(ctx: DomainCtx, goals: GoalRecord[]): Promise<Set<string>> {
  if (isAdmin(ctx.caller)) return new Set();
  const ids = new Set(
    goals.flatMap((g) => [...g.parent_links.map((l) => l.parent_uuid), ...(g.path ? g.path.split('/').slice(0, -1) : [])]),
  );
  if (!ids.size) return new Set();
  const [above, visible] = await Promise.all([ctx.loader.many(goalEntity, ids), goalEntryVisibility(ctx)]);
  return new Set(above.filter((p) => !visible(listEntryOf(goalEntity, p))).map((p) => p.uuid));
}

/** The goal with hidden parents left out of `parent_links`, and `path` starting below the nearest hidden ancestor. */
function withoutHidden(g: GoalRecord, hidden: Set<string>): GoalRecord {
  if (!hidden.size) return g;
  const segments = g.path?.split('/') ?? [];
  const lastHidden = segments.findLastIndex((s) => hidden.has(s));
  return {
    ...g,
    parent_links: g.parent_links.filter((l) => !hidden.has(l.parent_uuid)),
    path: lastHidden >= 0 ? segments.slice(lastHidden + 1).join('/') : g.path,
  };
}

type NamedLabels = (record: Labelled) => LabelRef[];

/**
 * `labels` of goals and check-ins as `{ uuid, name }`: the names the record keeps (`labels`); for records
 * written before names were kept, one batch read of their distinct labels for the whole page, and a label
 * deleted since it was attached is left out rather than shown without a name (as the change stream leaves it
 * out of the names kept).
 */
export async function labelNamer(loader: Loader, records: Labelled[]): Promise<NamedLabels> {
  const unnamed = new Set(records.flatMap((r) => (r.labels === undefined ? r.label_uuids : [])));
  const current = new Map(unnamed.size ? (await loader.many(labelEntity, unnamed)).map((l) => [l.uuid, l]) : []);
  return (r) => (r.labels ?? currentLabels(r.label_uuids, current)).map((l) => ({ uuid: l.uuid, name: l.name }));
}

export async function presentOne(ctx: DomainCtx, goal: GoalRecord) {
  return (await presentGoals(ctx, [goal]))[0]!;
}

function presentGoal(g: GoalRecord, labels: NamedLabels, today: string): PresentedGoal {
  return {
    uuid: g.uuid,
    type: g.type,
    title: g.title,
    description: g.description,
    start_date: g.start_date,
    end_date: g.end_date,
    goal_type: g.goal_type,
    time_period_uuid: g.time_period_uuid,
    current_metric_uuid: g.current_metric_uuid,
    creator_uuid: g.creator_uuid,
    last_checkin_date: g.last_checkin_date,
    score: g.score,
    current_progress: g.current_progress,
    ...paceFields(g, today), // expected_progress, pace (contract 13)
    current_value: g.current_value,
    current_status: g.current_status,
    status: g.current_status,
    source_uuid: g.source_uuid,
    source_type: g.source_type,
    path: g.path,
    searchable_content: g.searchable_content,
    progress_mode: g.progress_mode,
    value_updated_at: g.value_updated_at,
    status_updated_at: g.status_updated_at,
    value_updated_by_uuid: g.value_updated_by_uuid,
    status_updated_by_uuid: g.status_updated_by_uuid,
    visibility: g.visibility,
    ai_rollup_enabled: g.ai_rollup_enabled,
    data_sources_count: g.data_sources_count ?? 0,
    discarded_at: g.discarded_at,
    discarded_by_uuid: g.discarded_by_uuid,
    short_id_uuid: g.short_id_uuid,
    archived_at: g.archived_at,
    archived_by_uuid: g.archived_by_uuid,
    short_id: g.short_id,
    owner_uuids: g.owner_uuids,
    target: g.metric?.target_value ?? null,
    unit: g.metric?.unit ?? null,
    metric_type: g.metric?.metric_type ?? null,
    parent_links: g.parent_links,
    visible_entities: g.visible_entities,
    checkin_due_days: g.checkin_due_days,
    delegate_uuid: g.delegate_uuids[0] ?? null,
    delegate_uuids: g.delegate_uuids,
    partner_goals_external_id: g.partner_goals_external_id,
    team_uuids: g.team_uuids,
    labels: labels(g),
    created_at: g.created_at,
    updated_at: g.updated_at,
  };
}

/** The goal record on the wire: the response schema's type, so a field the presenter forgets fails the build. */
export type PresentedGoal = z.infer<typeof GoalRecordSchema>;

/**
 * What the caller may do with a goal. A discarded goal is read-only (nothing to update, delete or archive
 * any more); check-ins also need a goal that is not archived.
 */
export function goalChecks(goal: GoalRecord, access: GoalAccess): Checks {
  const live = access.canEdit && !goal.discarded_at;
  return { can_update: live, can_delete: live, can_checkin: live && !goal.archived_at, can_archive: live };
}

export const goalAccessSource = (access: GoalAccess): AccessSource => access.source ?? 'public';

/** Members and admins create goals; viewers do not (contract section 5). */
export const goalCollectionChecks = (ctx: DomainCtx): Checks => ({ can_create: canWriteContent(ctx.caller) });

/** `data = { type, record, checks, access_source }` for a goal (get, create, update, archive, unarchive). */
export async function goalRecordResponse(ctx: DomainCtx, status: number, view: { goal: GoalRecord; access: GoalAccess }) {
  return recordResponse(
    status,
    view.goal.type,
    await presentOne(ctx, view.goal),
    goalChecks(view.goal, view.access),
    goalAccessSource(view.access),
  );
}
