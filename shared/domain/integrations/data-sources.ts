import { scopedUuidOf } from '#shared/domain/scoped-id.ts';
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { AccessSource, Checks } from '#shared/auth/permissions.ts';
import { getEntity, mutateEntity, nowIso } from '#shared/db/store.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { readableGoal, requireGoalEditor, type GoalAccess } from '#shared/domain/goals/access.ts';
import { goalEntity } from '#shared/domain/goals/entity.ts';
import { dataSourceEntity, type DataSourceRecord } from '#shared/domain/integrations/entity.ts';
import { NotFoundError, ValidationError } from '#shared/errors.ts';
import type { DataSourceCreateBody } from '#shared/schemas/integrations.ts';

export type DataSourceInput = z.infer<typeof DataSourceCreateBody>;

/*
 * Rules decided here (contract section 8 adds the create; the spec only reads):
 *  - A data source belongs to one goal (any kind). Creating one is a change of the goal: the caller must be
 *    able to update it (403 otherwise, viewers always). goal_uuid is a reference in the body, so a goal
 *    that is not in the caller's tenant (another tenant's included) is 422 validation_failed on goal_uuid,
 *    as for every other unknown reference. A deleted (discarded) or archived goal is frozen, as for its
 *    check-ins, and takes no new data source (422 on goal_uuid).
 *  - The goal's data_sources_count moves in the same transaction as the data source is created.
 *  - Reading one needs the goal visible (403 otherwise): the data source is part of the goal.
 *  - config is opaque, but not a vault: it is returned to everyone who can see the goal, so keys that name
 *    a credential are refused (422) rather than stored in clear and shown to the tenant.
 */

const notFound = (id: string) => new NotFoundError('Data source', id);
const unknownGoal = (uuid: string) => ValidationError.field('goal_uuid', 'not_found', `goal_uuid ${uuid} is not a goal of this tenant`);

const CREDENTIAL_KEY = /password|passwd|secret|token|apikey|privatekey|credential|authorization|cookie/;

/** Dotted paths of config keys that look like credentials (key compared lower-cased, without separators). */
export function credentialPaths(value: unknown, path = 'config'): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => credentialPaths(v, `${path}.${i}`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => (CREDENTIAL_KEY.test(k.toLowerCase().replace(/[^a-z0-9]/g, '')) ? [`${path}.${k}`] : credentialPaths(v, `${path}.${k}`)));
}

export interface DataSourceView {
  dataSource: DataSourceRecord;
  access: GoalAccess;
}

export async function createDataSource(ctx: DomainCtx, input: DataSourceInput): Promise<DataSourceView> {
  const secrets = credentialPaths(input.config);
  if (secrets.length) {
    throw new ValidationError(
      'config must not carry credentials: it is shown to everyone who can see the goal',
      secrets.map((field) => ({ field, code: 'credential_not_allowed', message: `${field} looks like a credential` })),
    );
  }
  const goalUuid = input.goal_uuid.toLowerCase();
  // Identity and time are fixed before the retry loop: every attempt writes the same record.
  const now = nowIso();
  const record: DataSourceRecord = { uuid: randomUUID(), goal_uuid: goalUuid, name: input.name, kind: input.kind, config: input.config ?? {}, creator_uuid: ctx.caller.userId, created_at: now, updated_at: now };
  let access!: GoalAccess;
  // One read of the goal: the permission checks run on the consistent read the write is conditioned on.
  await mutateEntity(
    ctx,
    goalEntity,
    goalUuid,
    async (current, tx) => {
      const goal = current.record;
      access = await requireGoalEditor(ctx, goal, () => unknownGoal(goalUuid)); // unseen reads as unknown (422); seen but not editable 403
      if (goal.discarded_at) throw ValidationError.field('goal_uuid', 'discarded', 'This goal is deleted; it takes no new data source');
      if (goal.archived_at) throw ValidationError.field('goal_uuid', 'archived', 'This goal is archived; it takes no new data source');
      tx.create(dataSourceEntity, record);
      return { ...goal, data_sources_count: (goal.data_sources_count ?? 0) + 1, updated_at: now };
    },
    () => unknownGoal(goalUuid),
  );
  return { dataSource: record, access };
}

/**
 * The data source uuid named by a path id: `<tenant_uuid>_<data_source_uuid>` or the bare uuid. A prefix
 * naming another tenant, or anything that is not a uuid, names nothing in the caller's tenant: 404, never a
 * hint that the data source exists elsewhere.
 */
export function dataSourceUuidOf(tenantId: string, id: string): string {
  return scopedUuidOf(tenantId, id, () => notFound(id));
}

/** GET /data_sources/{id}: 404 outside the caller's tenant, 403 when the caller cannot see the goal. */
export async function getDataSource(ctx: DomainCtx, id: string): Promise<DataSourceView> {
  const stored = await getEntity(ctx, dataSourceEntity, dataSourceUuidOf(ctx.tenantId, id));
  if (!stored) throw notFound(id);
  const { access } = await readableGoal(ctx, stored.record.goal_uuid);
  return { dataSource: stored.record, access };
}

export const presentDataSource = (d: DataSourceRecord) => ({
  uuid: d.uuid,
  goal_uuid: d.goal_uuid,
  name: d.name,
  kind: d.kind,
  config: d.config,
  creator_uuid: d.creator_uuid,
  created_at: d.created_at,
  updated_at: d.updated_at,
});

/** Managing a goal's data sources is editing the goal. */
export const dataSourceChecks = (access: GoalAccess): Checks => ({ can_update: access.canEdit });
export const dataSourceAccessSource = (access: GoalAccess): AccessSource => access.source ?? 'public';
