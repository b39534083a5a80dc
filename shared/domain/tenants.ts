import { randomUUID } from 'node:crypto';
import { nowIso } from '#shared/clock.ts';
import type { BaseRecord, EntityDef } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { writeActiveAdmins } from '#shared/domain/users/admins.ts';
import { newUserRecord } from '#shared/domain/users/entity.ts';
import type { UserRecord } from '#shared/domain/users/entity.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import { putChildRefsMoved } from '#shared/domain/goals/child-refs.ts';
import { putCheckinListsResharded } from '#shared/domain/checkins/list-shards.ts';
import { putReadModelsReady } from '#shared/read-models/goal-sync.ts';

export interface TenantRecord extends BaseRecord {
  name: string;
}

export const tenantEntity: EntityDef<TenantRecord> = { type: 'tenant' };

/**
 * Operator path: a new tenant and its first admin, written atomically, with its goal read models marked ready
 * (it has no goals, and the stream syncs each one it gets): its lists use them from the first request on. Its goals'
 * child links and its check-in lists are marked in their current layout (it has none stored before).
 */
export async function createTenant(
  dataFor: (tenantId: string) => Promise<DataCtx>,
  input: { name: string; adminEmail: string },
): Promise<{ tenant: TenantRecord; admin: UserRecord }> {
  const tenantId = randomUUID();
  const ctx = await dataFor(tenantId);
  const now = nowIso();
  const tenant: TenantRecord = { uuid: tenantId, name: input.name, created_at: now, updated_at: now };
  const admin = newUserRecord({ email: input.adminEmail, role: 'admin', creator_uuid: null }, now);
  const tx = putReadModelsReady(new WriteTx(ctx).create(tenantEntity, tenant).create(userEntity, admin), tenantId, now);
  // its first admin is its active admins (contract 19, shared/domain/users/admins.ts): no later write builds the list from its users
  writeActiveAdmins(tx, tenantId, { uuids: [], v: undefined }, [admin.uuid]);
  await putCheckinListsResharded(putChildRefsMoved(tx, tenantId, now), tenantId, now).commit();
  return { tenant, admin };
}

export async function getTenant(ctx: DataCtx): Promise<TenantRecord | undefined> {
  return (await getEntity(ctx, tenantEntity, ctx.tenantId))?.record;
}
