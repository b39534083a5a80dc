import { canWriteContent, type Caller } from '#shared/auth/caller.ts';
import type { Checks } from '#shared/auth/permissions.ts';
import { listEntryOf, type ListEntry } from '#shared/db/model.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { shareableEntryVisibility } from '#shared/domain/sharing/access.ts';
import { shareableEntity, type ShareableRecord } from '#shared/domain/sharing/entity.ts';
import { SHAREABLE_TYPE_BY_PATH } from '#shared/domain/sharing/types.ts';
import { runList } from '#shared/list/engine.ts';
import type { ListResource } from '#shared/list/resource.ts';

/**
 * GET /documents: the documents list `document` (one GSI1 partition, creation order), common list
 * parameters and the filter DSL on uuid, title, owner_uuid, created_at, updated_at. uuid is served by item
 * reads; the others are checked on the items (no index holds them). Documents the caller cannot see are
 * skipped on the index entry (shareableEntryVisibility), without reading them.
 */
const DOCUMENT = SHAREABLE_TYPE_BY_PATH.documents;

const entryOf = (d: ShareableRecord): ListEntry => listEntryOf(shareableEntity, d);

export const documentListResource: ListResource<ShareableRecord> = {
  type: DOCUMENT,
  entity: shareableEntity,
  lists: [DOCUMENT],
  attributes: {
    // By id, documents only: the uuid of a dashboard or playbook names no document.
    uuid: {
      type: 'string',
      get: (d) => d.uuid,
      index: async (values, env) => ({
        entries: (await env.loader.many(shareableEntity, values as string[])).filter((d) => d.type === DOCUMENT).map(entryOf),
      }),
    },
    title: { type: 'string', get: (d) => d.title },
    owner_uuid: { type: 'string', get: (d) => d.owner_uuid },
    created_at: { type: 'timestamp', get: (d) => d.created_at },
    updated_at: { type: 'timestamp', get: (d) => d.updated_at },
  },
};

export function listDocuments(ctx: DomainCtx, pairs: Array<[string, string]>) {
  return runList(documentListResource, { ctx, loader: ctx.loader, pairs, entryFilter: shareableEntryVisibility(ctx.caller) });
}

/** What the caller may do with the collection: create documents (not viewers). */
export const documentCollectionChecks = (caller: Caller): Checks => ({ can_create: canWriteContent(caller) });
