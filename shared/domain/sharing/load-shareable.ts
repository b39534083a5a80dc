import type { DataCtx, Stored } from '#shared/db/model.ts';
import { getEntity } from '#shared/db/reads.ts';
import { requireShareableType } from '#shared/domain/sharing/access.ts';
import { shareableEntity, type ShareableRecord } from '#shared/domain/sharing/entity.ts';
import { resourceUuidOf, shareableNotFound, type ShareablePath } from '#shared/domain/sharing/types.ts';

/**
 * The shareable of type `path` named by `shareableUuid` in the caller's tenant, whatever the caller's
 * access (access requests need none): 404 when absent, of another type, or named with another tenant.
 */
export async function loadShareable(ctx: DataCtx, path: ShareablePath, shareableUuid: string, consistent = false): Promise<Stored<ShareableRecord>> {
  const stored = await getEntity(ctx, shareableEntity, resourceUuidOf(ctx.tenantId, shareableUuid, path), consistent);
  if (!stored) throw shareableNotFound(path, shareableUuid);
  requireShareableType(stored.record, path, shareableUuid);
  return stored;
}
