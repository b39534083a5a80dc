import type { BaseRecord, EntityDef } from '#shared/db/model.ts';
import { newId } from '#shared/ids.ts';

export interface TimePeriodRecord extends BaseRecord {
  name: string;
  /** YYYY-MM-DD, inclusive bounds for goal dates. */
  start_date: string;
  end_date: string;
  creator_uuid: string | null;
}

export const timePeriodEntity: EntityDef<TimePeriodRecord> = { type: 'time_period' };

export function newTimePeriodRecord(
  input: { name: string; start_date: string; end_date: string; creator_uuid: string | null },
  now: string,
  uuid: string = newId(),
): TimePeriodRecord {
  return {
    uuid,
    name: input.name.trim(),
    start_date: input.start_date,
    end_date: input.end_date,
    creator_uuid: input.creator_uuid,
    created_at: now,
    updated_at: now,
  };
}
