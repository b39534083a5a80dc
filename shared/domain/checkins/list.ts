import { isAdmin } from '#shared/auth/caller.ts';
import { keys } from '#shared/db/keys.ts';
import { CHECKIN_LISTS, checkinEntity, checkinsOfGoal, LEGACY_CHECKIN_LISTS, type CheckinRecord } from '#shared/domain/checkins/entity.ts';
import { checkinListsResharded } from '#shared/domain/checkins/list-shards.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { listStart, type ListStart } from '#shared/list/start.ts';
import { goalEntryVisibility } from '#shared/domain/goals/access.ts';
import { goalEntity } from '#shared/domain/goals/entity.ts';
import { runList } from '#shared/list/engine.ts';
import type { ParsedFilter } from '#shared/list/filter.ts';
import { type AttrDef, type ListPlan, type ListQuery, type ListResource, uuidAttr, entryIndex } from '#shared/list/resource.ts';

const goalIndex: AttrDef<CheckinRecord> = {
  type: 'string',
  get: (c) => c.goal_uuid,
  // check-ins of the named goals: the `checkin@goal#<goal>` entry lists, creation order
  index: entryIndex(checkinsOfGoal),
};

/** Filterable attributes: the spec's list, plus `goal_uuid` (alias of checkinable_uuid) and a few record fields. */
const attributes: Record<string, AttrDef<CheckinRecord>> = {
  uuid: uuidAttr(),
  checkinable_type: { type: 'string', get: (c) => c.goal_type },
  checkinable_uuid: goalIndex,
  goal_uuid: goalIndex,
  checkin_date: { type: 'date', get: (c) => c.checkin_date },
  created_at: { type: 'timestamp', get: (c) => c.created_at },
  updated_at: { type: 'timestamp', get: (c) => c.updated_at },
  status: { type: 'string', get: (c) => c.status },
  value: { type: 'number', get: (c) => c.value },
  progress: { type: 'number', get: (c) => c.progress },
  score: { type: 'number', get: (c) => c.score },
  source_type: { type: 'string', get: (c) => c.source_type },
  creator_uuid: { type: 'string', get: (c) => c.creator_uuid },
  metric_uuid: { type: 'string', get: (c) => c.metric_uuid },
};

// the attributes whose eq/in an index serves: such a filter drives the list (the engine's generic plan)
const indexed = new Set(Object.entries(attributes).flatMap(([name, a]) => (a.index ? [name] : [])));
const drives = (f: ParsedFilter) => (f.predicate === 'eq' || f.predicate === 'in') && indexed.has(f.attribute);

/**
 * The whole list from the current shards, taken on trust while the tenant's marker is read (list-shards.ts:
 * known to the container once seen): a tenant not resharded falls back to the generic plan over every old name.
 * Each shard's first Query reads 16 keys: a check-in's list key is 247 bytes, so 16 (3,952 bytes) cost the 0.5
 * RCU any Query costs, and a page of 20 and the key telling `next` reads on (one follow-up, 0.5 RCU more) only
 * when one shard holds more than 16 of those 21.
 */
function currentShards({ filters, env }: ListQuery): Promise<ListPlan<CheckinRecord> | undefined> {
  if (filters.some(drives)) return Promise.resolve(undefined);
  return Promise.resolve({
    source: { partitions: CHECKIN_LISTS.map((l) => keys.entityList(env.ctx.tenantId, l)), firstRead: 16 },
    served: [],
    valid: checkinListsResharded(env.ctx),
  });
}

export const checkinListResource: ListResource<CheckinRecord> = {
  type: 'checkin',
  entity: checkinEntity,
  // every name the list had (the current shards among them): a tenant's check-ins until it is resharded, and what
  // a cursor is bound to, so one taken before the reshard still pages on after it
  lists: LEGACY_CHECKIN_LISTS,
  // Every shard's first Query costs at least 0.5 RCU, and up to 4 KB of keys (~250 bytes each) cost no more: 12
  // keys each make a page of 20 (and the key telling `next`) need a follow-up of one shard at most, however its
  // check-ins fall over the 16 old shards (a share of 3 each took up to four follow-ups in sequence).
  listsFirstRead: 12,
  driverOrder: ['uuid', 'checkinable_uuid', 'goal_uuid'],
  attributes,
  plan: currentShards,
};

/**
 * GET /checkins. Check-ins of goals the caller cannot see are left out. A check-in carries no copy of its
 * goal's visibility (it would go stale when the goal's owners or visibility change), so for non-admins the
 * goal is read with each batch and judged by the same rule as goal lists (goalEntryVisibility on the goal's
 * envelope). The list may start before the caller is known (its first keys read beside the caller's): whether
 * the goals are read at all is decided once it is.
 */
export function listCheckins(start: ListStart<DomainCtx> | DomainCtx, pairs: Array<[string, string]>) {
  const { data, loader, ctx } = listStart(start);
  const itemFilter = ctx.then(async (c) => {
    if (isAdmin(c.caller)) return undefined;
    const visible = await goalEntryVisibility(c);
    // one batch read of the goals of each batch of check-ins
    return async (checkins: CheckinRecord[]) => {
      const goals = new Map((await loader.many(goalEntity, new Set(checkins.map((c) => c.goal_uuid)))).map((g) => [g.uuid, g]));
      return checkins.map((c) => {
        const goal = goals.get(c.goal_uuid);
        return !!goal && visible({ id: goal.uuid, sortKey: '', ...goalEntity.envelope!(goal) });
      });
    };
  });
  return runList(checkinListResource, { ctx: data, loader, pairs, gate: ctx, itemFilter });
}
