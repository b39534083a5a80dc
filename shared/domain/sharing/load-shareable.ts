import type { Stored } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { shareableEntity, type ShareableRecord } from '#shared/domain/sharing/entity.ts';
import { resourceUuidOf, SHAREABLE_TYPE_BY_PATH, shareableNotFound, type ShareablePath } from '#shared/domain/sharing/types.ts';

/**
 * The shareable of type `path` named by `shareableUuid` in the caller's tenant, whatever the caller's
 * access (access requests need none): 404 when absent, of another type, or named with another tenant.
 */
export async function loadShareable(
  ctx: DataCtx,
  path: ShareablePath,
  shareableUuid: string,
  consistent = false,
): Promise<Stored<ShareableRecord>> {
  const stored = await findShareable(ctx, path, shareableUuid, consistent);
  if (!stored) throw shareableNotFound(path, shareableUuid);
  return stored;
}

/** As loadShareable, undefined where it answers 404 (a command's read: its decide answers). */
export async function findShareable(
  ctx: DataCtx,
  path: ShareablePath,
  shareableUuid: string,
  consistent = false,
): Promise<Stored<ShareableRecord> | undefined> {
  const stored = await getEntity(ctx, shareableEntity, resourceUuidOf(ctx.tenantId, shareableUuid, path), consistent);
  return stored && stored.record.type === SHAREABLE_TYPE_BY_PATH[path] ? stored : undefined;
}
