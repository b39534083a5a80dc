/** Goal create, the pure part (decide.ts has the commands' overview). */
import type { Stored } from '#shared/db/model.ts';
import { refuse, type Decision } from '#shared/decision.ts';
import type { GoalCreateCommand } from '#shared/domain/goals/commands.ts';
import { uniq } from '#shared/domain/fields.ts';
import {
  failure,
  parentRefusal,
  referenceDetails,
  unknownPeriod,
  type Actor,
  type KnownRefs,
  type SeenGoal,
} from '#shared/domain/goals/decide-refs.ts';
import type { GoalKind, GoalRecord, MetricRecord } from '#shared/domain/goals/entity.ts';
import {
  dateDetails,
  delegateConflict,
  delegatesOf,
  metricDetails,
  parentLinksOf,
  pathFor,
  searchableContent,
  visibleEntitiesOf,
} from '#shared/domain/goals/rules.ts';
import type { ClaimedLabel, LabelRecord, LabelRef } from '#shared/domain/labels/entity.ts';
import { labelNamesOf, resolveLabels } from '#shared/domain/labels/decide.ts';
import type { TimePeriodRecord } from '#shared/domain/time-periods/entity.ts';
import { planGoalWrite, type AncestorsRead, type GoalWriteWithRollups } from '#shared/domain/goals/rollup-plan.ts';

/**
 * What a create reads, in one batch: the period, the named users and teams, the new parents, the label name
 * claims (each naming its label as spelled); `labels`: the labels read for claims that carry no name (written
 * before claims did), by uuid.
 */
export interface CreateState {
  period: TimePeriodRecord | undefined;
  known: KnownRefs;
  parents: ReadonlyMap<string, SeenGoal>;
  labelClaims: ReadonlyMap<string, ClaimedLabel>;
  labels: ReadonlyMap<string, Pick<LabelRecord, 'uuid' | 'name'>>;
}

/** Ids a create may use, drawn by the shell in a fixed order: the metric's, the goal's, one per distinct label name. */
export interface CreateIds {
  metric: string;
  goal: string;
  labels: string[];
}

export interface CreateWrite {
  goal: GoalRecord;
  /** Labels the goal names, in order (some new), as the goal keeps them. */
  labels: LabelRef[];
  /** New labels, written in the goal's transaction. */
  createdLabels: LabelRecord[];
  /** Parents that must be unchanged when the transaction commits. */
  parents: Array<Stored<GoalRecord>>;
}

/**
 * The rules of a create, in the order they answer (403 for a viewer is the create's precheck, createRefusal,
 * answered before the read): 422 delegate conflict, unknown period,
 * 403 for a parent the caller cannot change, then every field rule at once (dates, references, parents,
 * metric), then label names.
 */
export function decideCreate(
  kind: GoalKind,
  input: GoalCreateCommand,
  state: CreateState,
  actor: Actor,
  now: string,
  ids: CreateIds,
): Decision<CreateWrite> {
  const conflict = delegateConflict(input);
  if (conflict) return refuse(conflict);
  const delegates = delegatesOf(input) ?? [];
  const period = state.period;
  if (!period) return { error: unknownPeriod(input.time_period_uuid) };
  const owners = uniq(input.owner_uuids);
  const teams = uniq(input.team_uuids);
  const visible = visibleEntitiesOf(input.visible_entities);
  const links = parentLinksOf(input.parents);
  const start = input.start_date ?? period.start_date;
  const end = input.end_date ?? period.end_date;
  const m = input.metric;
  const metric: MetricRecord | null = m
    ? {
        uuid: ids.metric,
        name: m.name ?? null,
        start_value: m.start_value ?? 0,
        target_value: m.target_value,
        unit: m.unit ?? null,
        metric_type: m.metric_type ?? 'reach',
      }
    : null;
  const parentCheck = parentRefusal(
    undefined,
    links.map((l) => l.parent_uuid),
    state.parents,
  );
  if (parentCheck.error) return { error: parentCheck.error };
  const error = failure([
    ...dateDetails(period, start, end, input),
    ...referenceDetails({ owner_uuids: owners, delegate_uuids: delegates, team_uuids: teams, visible_entities: visible }, state.known),
    ...parentCheck.details,
    ...metricDetails(metric),
  ]);
  if (error) return { error };
  const names = labelNamesOf(input.labels ?? []);
  if ('error' in names) return names;
  const { labels, created } = resolveLabels(names.wanted, state.labelClaims, state.labels, ids.labels, actor.userUuid, now);

  const uuid = ids.goal;
  const firstParent = links[0] ? state.parents.get(links[0].parent_uuid)?.stored.record : undefined;
  const goal: GoalRecord = {
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
    creator_uuid: actor.userUuid,
    last_checkin_date: null,
    score: null,
    current_progress: null, // no value yet
    current_value: null,
    current_status: 'not_started',
    status: null, // presented from current_status (earlier-variant name)
    source_uuid: null,
    source_type: null,
    path: pathFor(uuid, firstParent),
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
    label_uuids: labels.map((l) => l.uuid),
    labels,
    delegate_uuids: delegates,
    parent_links: links.map((l) => ({ parent_uuid: l.parent_uuid, contribution_percent: l.contribution_percent ?? 100 })),
    visible_entities: visible,
    checkin_due_days: input.checkin_due_days ?? null,
    partner_goals_external_id: null,
    created_at: now,
    updated_at: now,
  };
  goal.searchable_content = searchableContent(goal);
  return { write: { goal, labels, createdLabels: created, parents: [...state.parents.values()].map((p) => p.stored) } };
}

/** What a create reads when it moves its rollup ancestors itself: the batch, and the ancestors above its rollup parents. */
export interface CreateStateWithAncestors extends CreateState {
  /** The new parents and, above those in rollup mode, their rollup ancestors (the parents as in `parents`). */
  ancestors: AncestorsRead;
}

/**
 * The whole create, pure: decideCreate, then the goal's effect on its parents' rollups by deltas (planGoalWrite:
 * a new child counts with its contribution and no progress yet), written in the create's own transaction.
 */
export function decideCreateWithRollups(
  kind: GoalKind,
  input: GoalCreateCommand,
  state: CreateStateWithAncestors,
  actor: Actor,
  now: string,
  ids: CreateIds,
): Decision<CreateWrite & { rollups: GoalWriteWithRollups }> {
  const decided = decideCreate(kind, input, state, actor, now, ids);
  if ('error' in decided) return decided;
  return { write: { ...decided.write, rollups: planGoalWrite(undefined, decided.write.goal, state.ancestors, now) } };
}
