import type { DataCtx } from '#shared/db/data-ctx.ts';
import { findUniques } from '#shared/db/reads.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { labelEntity, labelsInGroup, normalizeLabelName, type LabelRecord } from '#shared/domain/labels/entity.ts';
import { listStart, type ListStart } from '#shared/list/start.ts';
import { runList } from '#shared/list/engine.ts';
import { type AttrDef, type ListResource, uuidAttr, entryIndex } from '#shared/list/resource.ts';

/** Label uuids holding the given names, through the `label_name` uniqueness claims (one BatchGetItem). */
async function idsByName(ctx: DataCtx, names: unknown[]): Promise<string[]> {
  return [
    ...(
      await findUniques(
        ctx,
        'label_name',
        names.map((n) => normalizeLabelName(String(n))),
      )
    ).values(),
  ];
}

/** An attribute of the label's group (the `parent` association), read through the per-request loader. */
const parentAttr =
  (pick: (p: LabelRecord) => unknown): AttrDef<LabelRecord>['get'] =>
  async (l, loader) => {
    const parent = await loader.one(labelEntity, l.parent_uuid);
    return parent ? pick(parent) : null;
  };

export const labelListResource: ListResource<LabelRecord> = {
  type: 'label',
  entity: labelEntity,
  lists: ['label'],
  driverOrder: ['uuid', 'name', 'parent_uuid', 'parent_name'],
  attributes: {
    uuid: uuidAttr(),
    name: { type: 'string', get: (l) => l.name, index: async (values, env) => ({ ids: await idsByName(env.ctx, values) }) },
    // parent_uuid is both the label's own attribute and the `parent` association's uuid
    parent_uuid: {
      type: 'string',
      get: (l) => l.parent_uuid,
      index: entryIndex(labelsInGroup),
    },
    is_group: { type: 'boolean', get: (l) => l.is_group },
    color: { type: 'string', get: (l) => l.color },
    creator_uuid: { type: 'string', get: (l) => l.creator_uuid },
    created_at: { type: 'timestamp', get: (l) => l.created_at },
    updated_at: { type: 'timestamp', get: (l) => l.updated_at },
    parent_name: {
      type: 'string',
      get: parentAttr((p) => p.name),
      // children of the named groups: group ids from the name claims, then their child entry lists
      index: async (values, env) => ({ partitions: (await idsByName(env.ctx, values)).map((id) => env.entryPartition(labelsInGroup, id)) }),
    },
    parent_parent_uuid: { type: 'string', get: parentAttr((p) => p.parent_uuid) },
    parent_is_group: { type: 'boolean', get: parentAttr((p) => p.is_group) },
    parent_color: { type: 'string', get: parentAttr((p) => p.color) },
  },
};

/** The list; started before the caller is known when the route starts it early (the list is the same for every caller). */
export function listLabels(start: ListStart<DomainCtx> | DomainCtx, pairs: Array<[string, string]>) {
  const { data, loader, ctx } = listStart(start);
  return runList(labelListResource, { ctx: data, loader, pairs, gate: ctx });
}
