import type { DomainCtx } from '#shared/domain/context.ts';
import { timePeriodEntity, type TimePeriodRecord } from '#shared/domain/time-periods/entity.ts';
import { listStart, type ListStart } from '#shared/list/start.ts';
import { runList } from '#shared/list/engine.ts';
import { type ListResource, uuidAttr } from '#shared/list/resource.ts';

export const timePeriodListResource: ListResource<TimePeriodRecord> = {
  type: 'time_period',
  entity: timePeriodEntity,
  lists: ['time_period'],
  attributes: {
    uuid: uuidAttr(),
    name: { type: 'string', get: (p) => p.name },
    start_date: { type: 'date', get: (p) => p.start_date },
    end_date: { type: 'date', get: (p) => p.end_date },
    creator_uuid: { type: 'string', get: (p) => p.creator_uuid },
    created_at: { type: 'timestamp', get: (p) => p.created_at },
    updated_at: { type: 'timestamp', get: (p) => p.updated_at },
  },
};

/** The list; started before the caller is known when the route starts it early (the list is the same for every caller). */
export function listTimePeriods(start: ListStart<DomainCtx> | DomainCtx, pairs: Array<[string, string]>) {
  const { data, loader, ctx } = listStart(start);
  return runList(timePeriodListResource, { ctx: data, loader, pairs, gate: ctx });
}
