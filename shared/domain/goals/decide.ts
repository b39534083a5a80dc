/**
 * Goal commands, the pure part: given what the command read, the input, the time and fresh ids, decide the
 * records to write or the typed error. No I/O, no clock, no id generation (test/unit/goals-decide.test.ts).
 * The shells (create.ts, update.ts, delete.ts, archive.ts) read, call these, and commit one transaction.
 */
import type { Stored } from '#shared/db/store.ts';
import type { GoalCreateCommand, GoalDeleteCommand } from '#shared/domain/goals/commands.ts';
import { goalEditRefusal, type GoalAccess } from '#shared/domain/goals/access.ts';
import { type GoalKind, type GoalRecord, type MetricRecord, GOAL_KINDS } from '#shared/domain/goals/entity.ts';
import { pathFor } from '#shared/domain/goals/hierarchy.ts';
import { dateDetails, delegatesOf, IMMEDIATE_FLAGS, metricDetails, parentLinksOf, searchableContent, uniq, visibleEntitiesOf } from '#shared/domain/goals/rules.ts';
import { LABEL_NAME_MAX, newLabelRecord, normalizeLabelName, type LabelRecord } from '#shared/domain/labels/entity.ts';
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

// ---------- labels named on a goal ----------

/** The label names of a body, normalized (first spelling kept), or the 422 for a name out of bounds. */
export function labelNamesOf(names: readonly string[]): { wanted: Map<string, string> } | { error: AppError } {
  const wanted = new Map<string, string>(); // normalized name → first spelling
  for (const raw of names) {
    const name = raw.trim();
    if (!name || name.length > LABEL_NAME_MAX) return { error: ValidationError.field('labels', 'invalid', `Label names must be 1 to ${LABEL_NAME_MAX} characters`) };
    const key = normalizeLabelName(name);
    if (!wanted.has(key)) wanted.set(key, name);
  }
  return { wanted };
}

/**
 * The labels the names resolve to, in order: an existing one by its name claim, else a new regular label
 * (its id the n-th of `ids`, n its place among the distinct names, so a retry names the same label).
 */
export function resolveLabels(
  wanted: ReadonlyMap<string, string>,
  claims: ReadonlyMap<string, string>,
  existing: ReadonlyMap<string, LabelRecord>,
  ids: readonly string[],
  creatorUuid: string,
  now: string,
): { labels: LabelRecord[]; created: LabelRecord[] } {
  const created: LabelRecord[] = [];
  const labels = [...wanted].map(([key, name], i) => {
    const id = claims.get(key);
    const found = id ? existing.get(id) : undefined;
    if (found) return found;
    const record = newLabelRecord({ name, creator_uuid: creatorUuid }, now, ids[i]);
    created.push(record);
    return record;
  });
  return { labels, created };
}

// ---------- create ----------

/** What a create reads, in one batch: the period, the named users and teams, the new parents, the label claims (and the labels they name). */
export interface CreateState {
  period: TimePeriodRecord | undefined;
  known: KnownRefs;
  parents: ReadonlyMap<string, SeenGoal>;
  labelClaims: ReadonlyMap<string, string>;
  labels: ReadonlyMap<string, LabelRecord>;
}

/** Ids a create may use, drawn by the shell in a fixed order: the metric's, the goal's, one per distinct label name. */
export interface CreateIds {
  metric: string;
  goal: string;
  labels: string[];
}

export interface CreateWrite {
  goal: GoalRecord;
  /** Labels the goal names, in order (some new). */
  labels: LabelRecord[];
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
    label_uuids: uniq(labels.map((l) => l.uuid)),
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
 * Contract 6: the goal and the `others` (its flagged children or whole hierarchy) are discarded; goals
 * already deleted are left as they are. The caller must be allowed to change each one (403 naming the first
 * it may not; a goal it cannot see is never named).
 */
export function decideDelete(target: SeenGoal, others: ReadonlyArray<SeenGoal>, actor: Actor, now: string): Decision<Array<{ before: Stored<GoalRecord>; after: GoalRecord }>> {
  const discarded: Array<{ before: Stored<GoalRecord>; after: GoalRecord }> = [];
  for (const s of [target, ...others]) {
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
