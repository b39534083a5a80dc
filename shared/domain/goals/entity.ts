import { keys } from '#shared/db/keys.ts';
import { entryList, type EntryList } from '#shared/db/entry-lists.ts';
import { entry, type BaseRecord, type EntityDef, type EntryDef } from '#shared/db/model.ts';
import { teamEntity } from '#shared/domain/teams/entity.ts';
import { timePeriodEntity } from '#shared/domain/time-periods/entity.ts';
import { TakenError, ValidationError } from '#shared/errors.ts';
import type { ProgressCause } from '#shared/domain/history/progress-cause.ts';
import type { LabelRef } from '#shared/domain/labels/entity.ts';

export const GOAL_KINDS = ['objective', 'key_result', 'initiative'] as const;
export type GoalKind = (typeof GOAL_KINDS)[number];
export const PATH_BY_KIND: Record<GoalKind, string> = { objective: 'objectives', key_result: 'key_results', initiative: 'initiatives' };

export const GOAL_STATUSES = ['not_started', 'in_progress', 'on_track', 'behind', 'at_risk', 'closed', 'postponed'] as const;
export type GoalStatus = (typeof GOAL_STATUSES)[number];
export const PROGRESS_MODES = ['manual', 'rollup', 'integration'] as const;
export type ProgressMode = (typeof PROGRESS_MODES)[number];
export const VISIBILITIES = ['public', 'limited'] as const;
export type Visibility = (typeof VISIBILITIES)[number];
export const GOAL_TYPES = ['aspirational', 'committed'] as const;
export const METRIC_TYPES = ['reach', 'stay_above', 'stay_below', 'stay_between'] as const;
export type MetricType = (typeof METRIC_TYPES)[number];

export interface MetricRecord {
  uuid: string;
  name: string | null;
  start_value: number;
  target_value: number;
  unit: string | null;
  metric_type: MetricType;
}

export interface ParentLink {
  parent_uuid: string;
  contribution_percent: number;
}

export interface VisibleEntity {
  entity_type: 'user' | 'team';
  entity_uuid: string;
  mode: 'view' | 'edit';
}

/**
 * The stored goal. Every field of the spec's goal record is here (null when unset) except the ones the
 * presenter derives: `target`/`unit`/`metric_type` (from `metric`) and `delegate_uuid` (the first delegate).
 * `status` is stored null: it is presented (and filtered) as `current_status`, its earlier-variant name.
 */
export interface GoalRecord extends BaseRecord {
  type: GoalKind;
  title: string;
  description: string | null;
  start_date: string;
  end_date: string;
  goal_type: (typeof GOAL_TYPES)[number];
  time_period_uuid: string;
  current_metric_uuid: string | null;
  metric: MetricRecord | null;
  creator_uuid: string;
  last_checkin_date: string | null;
  score: number | null;
  current_progress: number | null;
  current_value: number | null;
  current_status: GoalStatus;
  status: string | null;
  source_uuid: string | null;
  source_type: string | null;
  path: string | null;
  searchable_content: string | null;
  progress_mode: ProgressMode;
  value_updated_at: string | null;
  status_updated_at: string | null;
  value_updated_by_uuid: string | null;
  status_updated_by_uuid: string | null;
  visibility: Visibility;
  ai_rollup_enabled: boolean;
  data_sources_count: number;
  discarded_at: string | null;
  discarded_by_uuid: string | null;
  short_id: string | null;
  short_id_uuid: string | null;
  archived_at: string | null;
  archived_by_uuid: string | null;
  owner_uuids: string[];
  team_uuids: string[];
  label_uuids: string[];
  /**
   * The labels named, `label_uuids` in order: what the goal presents. Written by create/update from the labels
   * they read or create (read-your-writes); a label's rename or delete reaches it through the change stream
   * (`label-names` projection). Absent on goals written before it was kept: those are presented by reading the labels.
   */
  labels?: LabelRef[];
  delegate_uuids: string[];
  parent_links: ParentLink[];
  visible_entities: VisibleEntity[];
  checkin_due_days: number | null;
  partner_goals_external_id: string | null;
  /** Why the last write moved value/progress/status (history's cause marker, shared/domain/history/entity.ts); not presented. */
  progress_cause?: ProgressCause | null;
  /** A rollup goal's aggregate of its counted children, in hundredths (progress.ts RollupAggregate); not presented. */
  rollup?: { sum: number; weight: number } | null;
  /** The item version this record was written at when its parents' rollups moved in the same write (progress.ts); not presented. */
  rollup_synced_v?: number | null;
  /**
   * Its `child_of` entries are kept in its parents' partitions (childrenOfGoal); absent on a goal stored before
   * they were (kept in its own partition): its next write moves them (goalEntity.layout). Not presented.
   */
  child_refs?: true;
}

/** Principals a limited goal is visible to without being admin: `u:<user>` and `t:<team>`. */
export function goalAcl(g: GoalRecord): string[] {
  const acl = new Set<string>([`u:${g.creator_uuid}`]);
  for (const u of g.owner_uuids) acl.add(`u:${u}`);
  for (const u of g.delegate_uuids) acl.add(`u:${u}`);
  for (const t of g.team_uuids) acl.add(`t:${t}`);
  for (const e of g.visible_entities) acl.add(`${e.entity_type === 'team' ? 't' : 'u'}:${e.entity_uuid}`);
  return [...acl];
}

export const goalState = (g: GoalRecord): string | undefined => (g.discarded_at ? 'discarded' : g.archived_at ? 'archived' : undefined);

// The goal's entry lists: each kind is its own list (`<kind>@team#<team>`: the objectives of a team), except childrenOfGoal.
// The period and team entries are references that hold (`heldBy`): kept in the period's/team's partition and
// checked alive by the goal's transaction, so a concurrent delete of either cannot leave a goal naming it.
export const goalsInPeriod = (kind: GoalKind): EntryList => entryList(kind, 'time_period', { heldBy: timePeriodEntity.type });
export const goalsByOwner = (kind: GoalKind): EntryList => entryList(kind, 'owner');
export const goalsByTeam = (kind: GoalKind): EntryList => entryList(kind, 'team', { heldBy: teamEntity.type });
export const goalsByLabel = (kind: GoalKind): EntryList => entryList(kind, 'label');
export const goalsByDelegate = (kind: GoalKind): EntryList => entryList(kind, 'delegate');
/** The children of one kind of a goal: `<kind>@parent#<parent>`. */
export const childrenOfKind = (kind: GoalKind): EntryList => entryList(kind, 'parent');
/**
 * Kind-agnostic child list: one Query finds every child of a goal (rollup, hierarchy delete, ancestors). Kept in
 * the parent's partition, so a strongly consistent Query there lists a link the moment it commits (the index
 * may lag): a rollup recompute counts every child (hierarchy.ts childEntries). Same index partition as before.
 */
export const childrenOfGoal: EntryList = entryList('goal', 'child_of', { keptBy: 'goal' });
/** The same list as goals stored before `child_refs` keep it: in the child's own partition, only on the index. */
const childrenOfGoalInChild: EntryList = entryList('goal', 'child_of');

export const goalEntity: EntityDef<GoalRecord> = {
  type: 'goal',
  listName: (g) => g.type,
  entries: (g) => {
    const gone = (field: string, id: string) => () => ValidationError.field(field, 'not_found', `${id} no longer exists`);
    const e: EntryDef[] = [entry(goalsInPeriod(g.type), g.time_period_uuid, gone('time_period_uuid', g.time_period_uuid))];
    for (const u of g.owner_uuids) e.push(entry(goalsByOwner(g.type), u));
    for (const t of g.team_uuids) e.push(entry(goalsByTeam(g.type), t, gone('team_uuids', t)));
    for (const l of g.label_uuids) e.push(entry(goalsByLabel(g.type), l));
    for (const d of g.delegate_uuids) e.push(entry(goalsByDelegate(g.type), d));
    for (const p of g.parent_links) {
      e.push(entry(childrenOfKind(g.type), p.parent_uuid));
      e.push(entry(g.child_refs ? childrenOfGoal : childrenOfGoalInChild, p.parent_uuid));
    }
    return e;
  },
  layout: (g) => (g.child_refs ? g : { ...g, child_refs: true }),
  uniques: (g) =>
    g.short_id
      ? [
          {
            name: 'short_id',
            value: g.short_id.toUpperCase(),
            onTaken: () => new TakenError('short_id', `short_id ${g.short_id} is already taken`),
          },
        ]
      : [],
  envelope: (g) => ({ vis: g.visibility, acl: g.visibility === 'limited' ? goalAcl(g) : undefined, state: goalState(g) }),
};

/**
 * The tenant's goal-hierarchy guard (one side item): every update that adds a parent link reads its version
 * before walking for cycles and bumps it in the same transaction, so re-parentings commit one at a time.
 */
export const hierarchyGuardKey = (tenantId: string) => keys.misc(tenantId, 'goal_hierarchy', 'guard');
