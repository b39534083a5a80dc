import type { BaseRecord, EntityDef } from '#shared/db/store.ts';

export interface TimePeriodRecord extends BaseRecord {
  name: string;
  /** YYYY-MM-DD, inclusive bounds for goal dates. */
  start_date: string;
  end_date: string;
  creator_uuid: string | null;
}

export const timePeriodEntity: EntityDef<TimePeriodRecord> = { type: 'time_period' };
