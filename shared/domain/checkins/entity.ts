import type { BaseRecord, EntityDef } from '#shared/db/store.ts';
import type { GoalKind, GoalStatus } from '#shared/domain/goals/entity.ts';

export interface CheckinRecord extends BaseRecord {
  goal_uuid: string;
  /** Kind of the goal checked in on (`checkinable_type` filter). */
  goal_type: GoalKind;
  metric_uuid: string | null;
  value: number | null;
  progress: number | null;
  score: number | null;
  checkin_date: string;
  status: GoalStatus;
  note: string | null;
  creator_uuid: string;
  source_type: string | null;
  source_info: Record<string, unknown>;
  mentioned_entities: Record<string, unknown> | unknown[];
  label_uuids: string[];
}

export const checkinEntity: EntityDef<CheckinRecord> = {
  type: 'checkin',
  entries: (c) => [{ name: 'goal', value: c.goal_uuid }],
};
