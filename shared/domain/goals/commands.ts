/**
 * The domain's goal commands: what create, update and delete are asked to do, in the domain's own terms. The
 * wire schemas (shared/schemas/goals.ts) validate a body and map it to these; nothing here knows the wire.
 */
import type { GoalKind, GoalStatus, MetricType, ProgressMode, Visibility, GOAL_TYPES } from '#shared/domain/goals/entity.ts';
import type { ParentInput } from '#shared/domain/goals/rules.ts';

type GoalType = (typeof GOAL_TYPES)[number];

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

/** Fields both create and update take; undefined = not sent, null = cleared. */
interface GoalFieldsInput {
  description?: string | null;
  start_date?: string;
  end_date?: string;
  goal_type?: GoalType;
  visibility?: Visibility;
  team_uuids?: string[] | null;
  owner_uuids?: string[] | null;
  labels?: string[] | null;
  delegate_uuids?: string[] | null;
  delegate_uuid?: string | null;
  checkin_due_days?: number | null;
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

export type { GoalKind };
