/**
 * Goal commands, the pure part: given what the command read, the input, the time and fresh ids, decide the
 * records to write or the typed error. No I/O, no clock, no id generation (test/unit/goals-decide.test.ts).
 * The shells (create.ts, update.ts, delete.ts, archive.ts) read, call these, and commit one transaction.
 */
import type { Stored } from '#shared/db/model.ts';
import type { GoalCreateCommand, GoalDeleteCommand, GoalUpdateCommand, MetricUpdateInput } from '#shared/domain/goals/commands.ts';
import { sentFields, uniq } from '#shared/domain/fields.ts';
import { goalProgressAt } from '#shared/domain/goals/progress.ts';
import { goalEditRefusal, type GoalAccess } from '#shared/domain/goals/access.ts';
import { type GoalKind, type GoalRecord, type MetricRecord, GOAL_KINDS } from '#shared/domain/goals/entity.ts';
import { dateDetails, delegatesOf, IMMEDIATE_FLAGS, normalizeShortId, tooMany, metricDetails, parentLinksOf, searchableContent, visibleEntitiesOf, pathFor } from '#shared/domain/goals/rules.ts';
import type { ClaimedLabel, LabelRecord, LabelRef } from '#shared/domain/labels/entity.ts';
import { labelNamesOf, resolveLabels } from '#shared/domain/labels/decide.ts';
import type { TimePeriodRecord } from '#shared/domain/time-periods/entity.ts';
import { ForbiddenError, NotFoundError, ValidationError, type AppError, type ErrorDetail } from '#shared/errors.ts';

/** A domain command's outcome: the error to answer, or what to write. */
export type Decision<T> = { error: AppError } | { write: T };

/** Unwraps a decision: its error is thrown (the handler maps it), its writes returned. */
export function decided<T>(d: Decision<T>): T {
  if ('error' in d) throw d.error;
  return d.write;
}

/** Who runs the command. */
export interface Actor {
  userUuid: string;
  /** Admins and members create goals; viewers do not (contract 5). */
  canWriteContent: boolean;
}

/** A goal read for a command, with the caller's access to it. */
export interface SeenGoal {
  stored: Stored<GoalRecord>;
  access: GoalAccess;
}

// ---------- references (owners, delegates, teams, visible entities, period, parents) ----------

/** What exists in the tenant among the users and teams a body names. */
export interface KnownRefs {
  users: ReadonlySet<string>;
  teams: ReadonlySet<string>;
}

/** The users and teams a body names, to read in the command's batch. */
export function referencedIds(refs: { owner_uuids?: string[]; delegate_uuids?: string[]; team_uuids?: string[]; visible_entities?: Array<{ entity_type: string; entity_uuid: string }> }) {
  const entities = refs.visible_entities ?? [];
  return {
    users: uniq([...(refs.owner_uuids ?? []), ...(refs.delegate_uuids ?? []), ...entities.filter((e) => e.entity_type === 'user').map((e) => e.entity_uuid)]),
    teams: uniq([...(refs.team_uuids ?? []), ...entities.filter((e) => e.entity_type === 'team').map((e) => e.entity_uuid)]),
  };
}

/** Owners, delegates, teams and visible entities must exist in the caller's tenant; each bad uuid is named. */
export function referenceDetails(
  refs: { owner_uuids?: string[]; delegate_uuids?: string[]; team_uuids?: string[]; visible_entities?: Array<{ entity_type: 'user' | 'team'; entity_uuid: string }> },
  known: KnownRefs,
): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const check = (field: string, ids: string[] | undefined, set: ReadonlySet<string>, what: string) => {
    for (const id of uniq(ids)) if (!set.has(id)) details.push({ field, code: 'not_found', message: `${id} is not a ${what} of this tenant` });
  };
  check('owner_uuids', refs.owner_uuids, known.users, 'user');
  check('delegate_uuids', refs.delegate_uuids, known.users, 'user');
  check('team_uuids', refs.team_uuids, known.teams, 'team');
  for (const e of refs.visible_entities ?? []) {
    if (!(e.entity_type === 'user' ? known.users : known.teams).has(e.entity_uuid)) {
      details.push({ field: 'visible_entities', code: 'not_found', message: `${e.entity_uuid} is not a ${e.entity_type} of this tenant` });
    }
  }
  return details;
}

export const unknownPeriod = (uuid: string) => ValidationError.field('time_period_uuid', 'not_found', `time_period_uuid ${uuid} is not a time period of this tenant`);

/**
 * New parents: goals of the tenant the caller can see (an invisible one reads as unknown, so the answer
 * does not reveal it exists), that it may change (403: placing a goal under a parent moves the parent's
 * progress), not deleted, and neither the goal itself nor (`below`) one of its descendants.
 */
export function parentRefusal(goalUuid: string | undefined, added: string[], parents: ReadonlyMap<string, SeenGoal>, below: ReadonlySet<string> = new Set()): { error?: AppError; details: ErrorDetail[] } {
  const details: ErrorDetail[] = [];
  for (const id of added) {
    if (id === goalUuid) {
      details.push({ field: 'parents', code: 'cycle', message: 'A goal cannot be its own parent' });
      continue;
    }
    const p = parents.get(id);
    if (!p || !p.access.canView) details.push({ field: 'parents', code: 'not_found', message: `${id} is not a goal of this tenant` });
    else if (!p.access.canEdit) return { error: new ForbiddenError(`You cannot place a goal under ${id}: you cannot update that goal`), details };
    else if (p.stored.record.discarded_at) details.push({ field: 'parents', code: 'discarded', message: `${id} is a deleted goal` });
    else if (below.has(id)) details.push({ field: 'parents', code: 'cycle', message: `${id} is below this goal: linking it as a parent would make a cycle` });
  }
  return { details };
}

const failure = (details: ErrorDetail[]): AppError | undefined =>
  details.length ? new ValidationError(details.map((d) => (d.field ? `${d.field}: ${d.message}` : d.message)).join('; '), details) : undefined;

// ---------- create ----------

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

/** Viewers create nothing (contract 5). */
export const createRefusal = (actor: Actor): AppError | undefined => (actor.canWriteContent ? undefined : new ForbiddenError('Viewers cannot change content'));

/**
 * The rules of a create, in the order they answer: 403 for a viewer, 422 delegate conflict, unknown period,
 * 403 for a parent the caller cannot change, then every field rule at once (dates, references, parents,
 * metric), then label names.
 */
export function decideCreate(kind: GoalKind, input: GoalCreateCommand, state: CreateState, actor: Actor, now: string, ids: CreateIds): Decision<CreateWrite> {
  const refusal = createRefusal(actor);
  if (refusal) return { error: refusal };
  let delegates: string[];
  try {
    delegates = delegatesOf(input) ?? [];
  } catch (err) {
    return { error: err as AppError };
  }
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
    ? { uuid: ids.metric, name: m.name ?? null, start_value: m.start_value ?? 0, target_value: m.target_value, unit: m.unit ?? null, metric_type: m.metric_type ?? 'reach' }
    : null;
  const parentCheck = parentRefusal(undefined, links.map((l) => l.parent_uuid), state.parents);
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

// ---------- update ----------

/** The period an update must read: the new one, or the goal's when only dates are sent; undefined when neither changes. */
export function periodToRead(g: GoalRecord, input: GoalUpdateCommand): string | undefined {
  const periodChanged = input.time_period_uuid !== undefined && input.time_period_uuid !== g.time_period_uuid;
  return periodChanged || input.start_date !== undefined || input.end_date !== undefined ? (input.time_period_uuid ?? g.time_period_uuid) : undefined;
}

/** Parents an update links that the goal does not have yet (they are checked, version-checked and guarded). */
export const addedParents = (g: GoalRecord, input: GoalUpdateCommand): string[] =>
  input.parents === undefined ? [] : parentLinksOf(input.parents).map((l) => l.parent_uuid).filter((p) => !g.parent_links.some((l) => l.parent_uuid === p));

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
    : visibleEntitiesOf(input.visible_entities).filter((e) => !g.visible_entities.some((o) => o.entity_type === e.entity_type && o.entity_uuid.toLowerCase() === e.entity_uuid.toLowerCase()));

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
export function decideUpdate(kind: GoalKind, seen: SeenGoal, input: GoalUpdateCommand, state: UpdateState, actor: Actor, now: string, ids: UpdateIds): Decision<UpdateWrite> {
  const g = seen.stored.record;
  const refusal = editRefusal(kind, g, seen.access);
  if (refusal) return { error: refusal };
  const { title, description, goal_type, visibility, checkin_due_days, progress_mode } = input;
  const next: GoalRecord = { ...g, ...sentFields({ title, description, goal_type, visibility, checkin_due_days, progress_mode }), updated_at: now };
  // Leaving rollup mode: progress follows the goal's own value again.
  if (g.progress_mode === 'rollup' && next.progress_mode !== 'rollup') next.current_progress = goalProgressAt(next, next.current_value);
  if (input.current_status !== undefined && input.current_status !== g.current_status) {
    Object.assign(next, { current_status: input.current_status, status_updated_at: now, status_updated_by_uuid: actor.userUuid });
  }
  let delegates: string[] | undefined;
  try {
    if (input.short_id !== undefined) {
      const shortId = normalizeShortId(input.short_id);
      if (shortId !== g.short_id) Object.assign(next, { short_id: shortId, short_id_uuid: shortId ? ids.shortId : null });
    }
    delegates = delegatesOf(input);
  } catch (err) {
    return { error: err as AppError };
  }
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
    next.parent_links = links.map((l) => ({ parent_uuid: l.parent_uuid, contribution_percent: l.contribution_percent ?? g.parent_links.find((k) => k.parent_uuid === l.parent_uuid)?.contribution_percent ?? 100 }));
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
    if (!g.metric && input.target_value === undefined) details.push({ field: 'metric.target_value', code: 'required', message: 'A new metric needs target_value' });
    const current: MetricRecord = g.metric ?? { uuid: newUuid, name: null, start_value: 0, target_value: 0, unit: null, metric_type: 'reach' };
    next.metric = { ...current, ...sentFields(input) };
    details.push(...metricDetails(next.metric));
  }
  next.current_metric_uuid = next.metric?.uuid ?? null;
  if (JSON.stringify(next.metric) !== JSON.stringify(g.metric) && next.progress_mode !== 'rollup') {
    next.current_progress = goalProgressAt(next, next.current_value); // a removed metric reads the value as a percentage
  }
  return details;
}

// ---------- archive ----------

/**
 * A goal the caller may change: 404 for a goal of another kind (its path does not exist), the edit refusal
 * (403), 422 when deleted.
 */
export function editRefusal(kind: GoalKind, goal: GoalRecord, access: GoalAccess): AppError | undefined {
  if (goal.type !== kind) return goalNotFound(kind, goal.uuid);
  return goalEditRefusal(access) ?? (goal.discarded_at ? ValidationError.field('discarded_at', 'discarded', 'This goal is deleted; it cannot be changed') : undefined);
}

export const goalNotFound = (kind: GoalKind, id: string) => new NotFoundError(kind.replace('_', ' '), id);

/** Archive (or unarchive): set or clear archived_at/archived_by_uuid; undefined when there is nothing to change. */
export function decideArchive(kind: GoalKind, seen: SeenGoal, archived: boolean, actor: Actor, now: string): Decision<GoalRecord | undefined> {
  const g = seen.stored.record;
  const error = editRefusal(kind, g, seen.access);
  if (error) return { error };
  if (!!g.archived_at === archived) return { write: undefined };
  return { write: { ...g, archived_at: archived ? now : null, archived_by_uuid: archived ? actor.userUuid : null, updated_at: now } };
}

// ---------- delete (soft) ----------

/** The kinds whose direct children a delete also discards (the including_immediate_* flags sent). */
export const immediateKinds = (input: GoalDeleteCommand): GoalKind[] => GOAL_KINDS.filter((k) => input[IMMEDIATE_FLAGS[k]]);

/**
 * Contract 6: the goal and the `others` (its flagged children or whole hierarchy, `truncated` when the walk
 * stopped at a transaction's size) are discarded; goals already deleted are left as they are. The target
 * must be of the route's kind (404) and changeable by the caller (403); so must each other goal (403 naming
 * the first it may not; a goal it cannot see is never named). A hierarchy too large for one transaction is
 * 422 too_many and nothing is deleted.
 */
export function decideDelete(
  kind: GoalKind,
  input: GoalDeleteCommand,
  target: SeenGoal,
  others: { goals: ReadonlyArray<SeenGoal>; truncated: boolean },
  actor: Actor,
  now: string,
): Decision<Array<{ before: Stored<GoalRecord>; after: GoalRecord }>> {
  const t = target.stored.record;
  const refusal = t.type !== kind ? goalNotFound(kind, t.uuid) : goalEditRefusal(target.access);
  if (refusal) return { error: refusal };
  if (others.truncated) return { error: tooMany('delete_hierarchy') };
  const discarded: Array<{ before: Stored<GoalRecord>; after: GoalRecord }> = [];
  for (const s of [target, ...others.goals]) {
    const g = s.stored.record;
    if (g.discarded_at) continue;
    if (s !== target && !s.access.canEdit) {
      // a goal the caller cannot see is not named (contract 5): its uuid would reveal it
      return { error: new ForbiddenError(s.access.canView ? `You cannot delete ${g.type.replace('_', ' ')} ${g.uuid} of this hierarchy` : 'You cannot delete every goal of this hierarchy') };
    }
    discarded.push({ before: s.stored, after: { ...g, discarded_at: now, discarded_by_uuid: actor.userUuid, updated_at: now } });
  }
  return { write: discarded };
}

/** The field a too_many refusal of a delete names: what the client should send less of. */
export const deleteBlame = (kind: GoalKind, input: GoalDeleteCommand) => (input.delete_hierarchy ? 'delete_hierarchy' : IMMEDIATE_FLAGS[immediateKinds(input)[0] ?? kind]);
