import { keys } from '#shared/db/keys.ts';
import { partitionEntries } from '#shared/db/index-queries.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntities } from '#shared/db/reads.ts';
import type { SideItem, SideKey } from '#shared/db/side-items.ts';
import type { WriteTx } from '#shared/db/write-tx.ts';
import { isActiveAdmin } from '#shared/domain/users/decide.ts';
import { userEntity, type UserRecord } from '#shared/domain/users/entity.ts';

/*
 * A tenant always keeps an active admin (contract section 19). Who they are is one side item of the tenant
 * (`T#<t>#admins#active`): the uuids of its active admin users and a version `v`. Every user write that makes a user
 * an active admin or makes one stop being one (createUser, updateUser: every door's user writes go through them)
 * reads it strongly consistently in the same BatchGetItem as the user, decides on it (decideActiveAdmins: 409
 * last_admin when it would be left empty) and writes it in the user's own transaction, conditioned on the version
 * read. So two requests that each remove one of the last two admins read the same list, and the second to commit
 * fails its condition, reads again and is refused: exact under any concurrency, with no extra round trip (a
 * service account or a user alike; a role change among members and viewers does not read it).
 */

/** The tenant's active-admins item. */
export const activeAdminsKey = (tenantId: string): SideKey => keys.misc(tenantId, 'admins', 'active');

/** The active admins as a command read them: `v` the stored version, undefined when the tenant has no item yet. */
export interface ActiveAdmins {
  uuids: string[];
  v: number | undefined;
}

/** Users read per BatchGetItem, and BatchGetItems in flight at once, when a tenant's item is first built. */
const USERS_PER_READ = 100;
const READS_IN_FLIGHT = 8;

/**
 * The active admins from the item as read (`item`), or, for a tenant without one (its users from before the item,
 * or its first admin, written with the tenant), built from its users: the user list, each user read strongly
 * consistently, plus `known`, the users this request read itself (the user changed, the calling user), which a
 * list that lags a just-made user would miss. No user's admin standing changes while the item is absent: the write
 * that changes one creates the item (conditioned on its absence), so a build and such a write cannot both commit.
 */
export async function activeAdminsOf(ctx: DataCtx, item: SideItem | undefined, known: UserRecord[]): Promise<ActiveAdmins> {
  if (item) return { uuids: Array.isArray(item.uuids) ? (item.uuids as string[]) : [], v: Number(item.v) };
  const ids: string[] = [];
  for await (const e of partitionEntries(ctx, keys.entityList(ctx.tenantId, userEntity.type))) ids.push(e.id);
  const admins = new Set(known.filter(isActiveAdmin).map((u) => u.uuid));
  const chunks: string[][] = [];
  for (let i = 0; i < ids.length; i += USERS_PER_READ) chunks.push(ids.slice(i, i + USERS_PER_READ));
  for (let i = 0; i < chunks.length; i += READS_IN_FLIGHT) {
    const read = await Promise.all(chunks.slice(i, i + READS_IN_FLIGHT).map((c) => getEntities(ctx, userEntity, c)));
    for (const found of read) for (const { record } of found.values()) if (isActiveAdmin(record)) admins.add(record.uuid);
  }
  return { uuids: [...admins].sort(), v: undefined };
}

/** Writes the active admins `next` in `tx`, conditioned on the item being as `read` (the version read, or still absent). */
export function writeActiveAdmins(tx: WriteTx, tenantId: string, read: ActiveAdmins, next: string[]): void {
  tx.putSide(
    activeAdminsKey(tenantId),
    { uuids: next, v: (read.v ?? 0) + 1 },
    { if: read.v === undefined ? { exists: false } : { equals: { v: read.v } } },
  );
}
