/**
 * The domain's goal commands: what create, update and delete are asked to do, in the domain's own terms. The
 * wire schemas (the goal body schemas) validate a body and map it to these; nothing here knows the wire. The
 * handlers pass the parsed body to the command as it is, so a body schema drifting from its command fails the build there.
 */
import type { GoalRecord, GoalStatus, MetricType, ProgressMode } from '#shared/domain/goals/entity.ts';
import type { ParentInput } from '#shared/domain/goals/rules.ts';

export interface VisibleEntityInput {
  entity_type: 'user' | 'team';
  entity_uuid: string;
  mode?: 'view' | 'edit';
}

export interface MetricCreateInput {
  name?: string | null;
  start_value?: number;
  target_value: number;
  unit?: string | null;
  metric_type?: MetricType;
}

export type MetricUpdateInput = { [K in keyof MetricCreateInput]?: MetricCreateInput[K] };

/** Sent or not: undefined = not sent (update: unchanged), null = cleared. */
type Sent<T> = { [K in keyof T]?: T[K] };

/** Fields both create and update take: the record's own, and the associations named by uuid (labels by name). */
interface GoalFieldsInput
  extends Sent<Pick<GoalRecord, 'description' | 'start_date' | 'end_date' | 'goal_type' | 'visibility' | 'checkin_due_days'>> {
  owner_uuids?: string[] | null;
  delegate_uuids?: string[] | null;
  /** The earlier variant of delegate_uuids (one delegate, or null). */
  delegate_uuid?: string | null;
  team_uuids?: string[] | null;
  labels?: string[] | null;
  parents?: ParentInput[] | null;
  visible_entities?: VisibleEntityInput[] | null;
}

export interface GoalCreateCommand extends GoalFieldsInput {
  title: string;
  time_period_uuid: string;
  metric?: MetricCreateInput | null;
}

export interface GoalUpdateCommand extends GoalFieldsInput {
  title?: string;
  time_period_uuid?: string;
  short_id?: string | null;
  current_status?: GoalStatus;
  progress_mode?: ProgressMode;
  metric?: MetricUpdateInput | null;
}

export type GoalDeleteCommand = {
  delete_hierarchy?: boolean;
} & { [K in `including_immediate_${'objectives' | 'key_results' | 'initiatives'}`]?: boolean };
