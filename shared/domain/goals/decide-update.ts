/** Goal update, the pure part (decide.ts has the commands' overview). */
import type { Stored } from '#shared/db/model.ts';
import { refuse, type Decision } from '#shared/decision.ts';
import type { GoalUpdateCommand, MetricUpdateInput } from '#shared/domain/goals/commands.ts';
import { sentFields, uniq } from '#shared/domain/fields.ts';
import type { CreateState } from '#shared/domain/goals/decide-create.ts';
import {
  editRefusal,
  failure,
  parentRefusal,
  referenceDetails,
  unknownPeriod,
  type Actor,
  type SeenGoal,
} from '#shared/domain/goals/decide-refs.ts';
import type { GoalKind, GoalRecord, MetricRecord } from '#shared/domain/goals/entity.ts';
import { goalProgressAt } from '#shared/domain/goals/progress.ts';
import {
  dateDetails,
  delegateConflict,
  delegatesOf,
  metricDetails,
  normalizeShortId,
  parentLinksOf,
  pathFor,
  searchableContent,
  visibleEntitiesOf,
} from '#shared/domain/goals/rules.ts';
import type { LabelRecord, LabelRef } from '#shared/domain/labels/entity.ts';
import type { ErrorDetail } from '#shared/errors.ts';
import { labelNamesOf, resolveLabels } from '#shared/domain/labels/decide.ts';

/** The period an update must read: the new one, or the goal's when only dates are sent; undefined when neither changes. */
export function periodToRead(g: GoalRecord, input: GoalUpdateCommand): string | undefined {
  const periodChanged = input.time_period_uuid !== undefined && input.time_period_uuid !== g.time_period_uuid;
  return periodChanged || input.start_date !== undefined || input.end_date !== undefined
    ? (input.time_period_uuid ?? g.time_period_uuid)
    : undefined;
}

/** Parents an update links that the goal does not have yet (they are checked, version-checked and guarded). */
export const addedParents = (g: GoalRecord, input: GoalUpdateCommand): string[] =>
  input.parents === undefined
    ? []
    : parentLinksOf(input.parents)
        .map((l) => l.parent_uuid)
        .filter((p) => !g.parent_links.some((l) => l.parent_uuid === p));

/** The new first parent when an update changes it (its path is the goal's new prefix): null for none left, undefined when unchanged. */
export function newFirstParent(g: GoalRecord, input: GoalUpdateCommand): string | null | undefined {
  if (input.parents === undefined) return undefined;
  const first = parentLinksOf(input.parents)[0]?.parent_uuid;
  return first !== g.parent_links[0]?.parent_uuid ? (first ?? null) : undefined;
}

/** Visible entities an update adds: only those are checked for existence (a round trip of the goal's own list never fails on a team deleted since). */
export const addedVisibleEntities = (g: GoalRecord, input: GoalUpdateCommand) =>
  input.visible_entities === undefined
    ? undefined
    : visibleEntitiesOf(input.visible_entities).filter(
        (e) =>
          !g.visible_entities.some((o) => o.entity_type === e.entity_type && o.entity_uuid.toLowerCase() === e.entity_uuid.toLowerCase()),
      );

/** What an update reads after the goal, in one batch: the period, the newly named users and teams, the added parents (and the new first one), the label claims; the cycle walk's answer. */
export interface UpdateState extends CreateState {
  /** Added parents that are the goal's descendants (linking them would close a cycle). */
  below: ReadonlySet<string>;
}

/** Ids an update may use, drawn by the shell in a fixed order: a new short_id assignment's, a new metric's, one per distinct label name. */
export interface UpdateIds {
  shortId: string;
  metric: string;
  labels: string[];
}

export interface UpdateWrite {
  goal: GoalRecord;
  /** The labels named (undefined when `labels` was not sent), and those to create. */
  labels: LabelRef[] | undefined;
  createdLabels: LabelRecord[];
  /** Added parents, unchanged at commit; `guard`: the write adds a parent, so it bumps the tenant's hierarchy guard. */
  parents: Array<Stored<GoalRecord>>;
  guard: boolean;
  removedParents: string[];
}

/**
 * The rules of an update, in the order they answer: 404 other kind, 403, 422 deleted; short_id format;
 * delegate conflict; unknown period; 403 for a new parent the caller cannot change; every field rule at once
 * (dates, references, parents, metric); label names.
 */
export function decideUpdate(
  kind: GoalKind,
  seen: SeenGoal,
  input: GoalUpdateCommand,
  state: UpdateState,
  actor: Actor,
  now: string,
  ids: UpdateIds,
): Decision<UpdateWrite> {
  const g = seen.stored.record;
  const refusal = editRefusal(kind, g, seen.access);
  if (refusal) return { error: refusal };
  const { title, description, goal_type, visibility, checkin_due_days, progress_mode } = input;
  const next: GoalRecord = {
    ...g,
    ...sentFields({ title, description, goal_type, visibility, checkin_due_days, progress_mode }),
    updated_at: now,
  };
  // Leaving rollup mode: progress follows the goal's own value again.
  if (g.progress_mode === 'rollup' && next.progress_mode !== 'rollup') next.current_progress = goalProgressAt(next, next.current_value);
  if (input.current_status !== undefined && input.current_status !== g.current_status) {
    Object.assign(next, { current_status: input.current_status, status_updated_at: now, status_updated_by_uuid: actor.userUuid });
  }
  if (input.short_id !== undefined) {
    const normalized = normalizeShortId(input.short_id);
    if ('error' in normalized) return normalized;
    if (normalized.shortId !== g.short_id)
      Object.assign(next, { short_id: normalized.shortId, short_id_uuid: normalized.shortId ? ids.shortId : null });
  }
  const conflict = delegateConflict(input);
  if (conflict) return refuse(conflict);
  const delegates = delegatesOf(input);
  if (delegates !== undefined) next.delegate_uuids = delegates;
  if (input.owner_uuids !== undefined) next.owner_uuids = uniq(input.owner_uuids);
  if (input.team_uuids !== undefined) next.team_uuids = uniq(input.team_uuids);
  if (input.visible_entities !== undefined) next.visible_entities = visibleEntitiesOf(input.visible_entities);

  const details: ErrorDetail[] = [];
  // rules 1-3: a new period resets the dates not sent to its own; any date change is checked against the period
  const periodId = periodToRead(g, input);
  if (periodId !== undefined) {
    const period = state.period;
    if (!period) return { error: unknownPeriod(periodId) };
    const periodChanged = period.uuid !== g.time_period_uuid;
    next.time_period_uuid = period.uuid;
    next.start_date = input.start_date ?? (periodChanged ? period.start_date : g.start_date);
    next.end_date = input.end_date ?? (periodChanged ? period.end_date : g.end_date);
    details.push(...dateDetails(period, next.start_date, next.end_date, input));
  }
  details.push(
    ...referenceDetails(
      {
        owner_uuids: input.owner_uuids === undefined ? undefined : next.owner_uuids,
        delegate_uuids: delegates,
        team_uuids: input.team_uuids === undefined ? undefined : next.team_uuids,
        visible_entities: addedVisibleEntities(g, input),
      },
      state.known,
    ),
  );
  let removedParents: string[] = [];
  const added = addedParents(g, input);
  if (input.parents !== undefined) {
    // links kept keep their contribution unless one is given
    const links = parentLinksOf(input.parents);
    const check = parentRefusal(g.uuid, added, state.parents, state.below);
    if (check.error) return { error: check.error };
    details.push(...check.details);
    next.parent_links = links.map((l) => ({
      parent_uuid: l.parent_uuid,
      contribution_percent:
        l.contribution_percent ?? g.parent_links.find((k) => k.parent_uuid === l.parent_uuid)?.contribution_percent ?? 100,
    }));
    const first = newFirstParent(g, input);
    if (first !== undefined) next.path = pathFor(g.uuid, first === null ? undefined : state.parents.get(first)?.stored.record);
    removedParents = g.parent_links.map((l) => l.parent_uuid).filter((p) => !links.some((l) => l.parent_uuid === p));
  }
  if (input.metric !== undefined) details.push(...applyMetric(g, next, input.metric, ids.metric));
  const error = failure(details);
  if (error) return { error };

  let labels: LabelRef[] | undefined;
  let createdLabels: LabelRecord[] = [];
  if (input.labels !== undefined) {
    const names = labelNamesOf(input.labels ?? []);
    if ('error' in names) return names;
    ({ labels, created: createdLabels } = resolveLabels(names.wanted, state.labelClaims, state.labels, ids.labels, actor.userUuid, now));
    next.label_uuids = labels.map((l) => l.uuid);
    next.labels = labels;
  }
  next.searchable_content = searchableContent(next);
  if (next.current_progress !== g.current_progress) next.progress_cause = { cause: 'metric_changed', at: now }; // history: the metric or mode moved progress
  const parents = added.flatMap((p) => {
    const s = state.parents.get(p);
    return s ? [s.stored] : [];
  });
  return { write: { goal: next, labels, createdLabels, parents, guard: added.length > 0, removedParents } };
}

/**
 * `metric` on update: merged onto the current metric (same uuid), a new metric (uuid `newUuid`) when there is
 * none (then target_value is required), null removes it. A changed metric re-reads progress from the
 * current value, except in rollup mode where progress is the children's.
 */
function applyMetric(g: GoalRecord, next: GoalRecord, input: MetricUpdateInput | null, newUuid: string): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  if (input === null) next.metric = null;
  else {
    if (!g.metric && input.target_value === undefined)
      details.push({ field: 'metric.target_value', code: 'required', message: 'A new metric needs target_value' });
    const current: MetricRecord = g.metric ?? {
      uuid: newUuid,
      name: null,
      start_value: 0,
      target_value: 0,
      unit: null,
      metric_type: 'reach',
    };
    next.metric = { ...current, ...sentFields(input) };
    details.push(...metricDetails(next.metric));
  }
  next.current_metric_uuid = next.metric?.uuid ?? null;
  if (JSON.stringify(next.metric) !== JSON.stringify(g.metric) && next.progress_mode !== 'rollup') {
    next.current_progress = goalProgressAt(next, next.current_value); // a removed metric reads the value as a percentage
  }
  return details;
}
