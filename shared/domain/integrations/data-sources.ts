import { scopedUuidOf } from '#shared/domain/scoped-id.ts';
import { newId } from '#shared/ids.ts';
import type { AccessSource, Checks } from '#shared/auth/permissions.ts';
import { runCommand } from '#shared/db/commands.ts';
import { getEntity } from '#shared/db/reads.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalAccess, type GoalAccess } from '#shared/domain/goals/access.ts';
import { readableGoal } from '#shared/domain/goals/reads.ts';
import { goalEntity } from '#shared/domain/goals/entity.ts';
import {
  dataSourceConfigRefusal,
  decideCreateDataSource,
  newDataSource,
  type DataSourceCommand,
} from '#shared/domain/integrations/decide.ts';
import { dataSourceEntity, type DataSourceRecord } from '#shared/domain/integrations/entity.ts';
import { NotFoundError, ValidationError } from '#shared/errors.ts';

/*
 * Data source commands: read, decide (decide.ts, where the rules are), write once. goal_uuid is a reference
 * in the body, so a goal that is not in the caller's tenant (another tenant's included) is 422
 * validation_failed on goal_uuid, as for every other unknown reference; one the caller cannot see reads as
 * unknown too, one it sees but cannot edit is 403. Reading one needs the goal visible (403 otherwise).
 */

const notFound = (id: string) => new NotFoundError('Data source', id);
export const unknownGoal = (uuid: string) =>
  ValidationError.field('goal_uuid', 'not_found', `goal_uuid ${uuid} is not a goal of this tenant`);

export interface DataSourceView {
  dataSource: DataSourceRecord;
  access: GoalAccess;
}

export async function createDataSource(ctx: DomainCtx, input: DataSourceCommand): Promise<DataSourceView> {
  const uuid = newId();
  const goalUuid = input.goal_uuid.toLowerCase();
  const hidden = () => unknownGoal(goalUuid);
  // One read of the goal: the permission checks run on the consistent read the write is conditioned on.
  return runCommand(ctx, {
    precheck: () => dataSourceConfigRefusal(input),
    read: async () => {
      const current = await getEntity(ctx, goalEntity, goalUuid, true);
      return current && { current, access: await goalAccess(ctx, current.record) };
    },
    decide: (s, now) => decideCreateDataSource(s?.current.record, s?.access, now, hidden),
    write: (tx, goal, s, { now }) => {
      // identity and time are the command's: every attempt writes the same record
      const dataSource = newDataSource(ctx.caller, input, now, uuid);
      tx.create(dataSourceEntity, dataSource).replace(goalEntity, s!.current, goal);
      return { dataSource, access: s!.access };
    },
  });
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

/** Managing a goal's data sources is editing the goal. */
export const dataSourceChecks = (access: GoalAccess): Checks => ({ can_update: access.canEdit });
export const dataSourceAccessSource = (access: GoalAccess): AccessSource => access.source ?? 'public';
