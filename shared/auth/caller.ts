import type { Db } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { partitionEntries, type DataCtx } from '#shared/db/store.ts';
import type { UserRecord, Role } from '#shared/domain/users/entity.ts';

/** The authenticated caller, resolved from the JWT claims and the user's own record. */
export interface Caller {
  tenantId: string;
  userId: string;
  role: Role;
  user: UserRecord;
}

export const isAdmin = (c: Caller) => c.role === 'admin';
/** Viewers write only access requests and connector requests (contract section 5). */
export const canWriteContent = (c: Caller) => c.role !== 'viewer';

/** Uuids of the teams the caller belongs to (as member or owner), read once per request when needed. */
export async function callerTeamUuids(ctx: DataCtx & { db: Db }, userId: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const e of partitionEntries(ctx, keys.entryList(ctx.tenantId, 'team', 'member', userId))) if (e.state !== 'archived') ids.add(e.id);
  return ids;
}
