import { canWriteContent } from '#shared/auth/caller.ts';
import type { AccessSource, Checks } from '#shared/auth/permissions.ts';
import type { CheckinRecord } from '#shared/domain/checkins/entity.ts';
import type { CheckinView } from '#shared/domain/checkins/service.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalChecks, labelNamer } from '#shared/presenters/goals.ts';
import { recordResponse } from '#shared/http/respond.ts';
import type { CheckinRecordSchema } from '#shared/schemas/checkins.ts';
import type { z } from 'zod';

/** The check-in record on the wire: the response schema's type, so a field the presenter forgets fails the build. */
export type PresentedCheckin = z.infer<typeof CheckinRecordSchema>;

/** The check-in record as every endpoint returns it; labels as {uuid, name} like goals (from the names the check-in keeps; check-ins written before names were kept: one batch read per page). */
export async function presentCheckins(ctx: DomainCtx, checkins: CheckinRecord[]): Promise<PresentedCheckin[]> {
  const labels = await labelNamer(ctx.loader, checkins);
  return checkins.map(
    (c): PresentedCheckin => ({
      uuid: c.uuid,
      goal_uuid: c.goal_uuid,
      metric_uuid: c.metric_uuid,
      value: c.value,
      progress: c.progress,
      score: c.score,
      checkin_date: c.checkin_date,
      status: c.status,
      note: c.note,
      creator_uuid: c.creator_uuid,
      source_info: c.source_info,
      source: c.source ?? 'api',
      data_source_uuid: c.data_source_uuid ?? null,
      mentioned_entities: c.mentioned_entities,
      labels: labels(c),
      created_at: c.created_at,
      updated_at: c.updated_at,
    }),
  );
}

export const presentCheckin = async (ctx: DomainCtx, c: CheckinRecord) => (await presentCheckins(ctx, [c]))[0]!;

/** Changing a check-in is checking in on its goal: edit rights, and a goal neither deleted nor archived. */
export function checkinChecks(view: Pick<CheckinView, 'goal' | 'access'>): Checks {
  const can = goalChecks(view.goal, view.access).can_checkin;
  return { can_update: can, can_delete: can };
}
export const checkinAccessSource = (view: Pick<CheckinView, 'access'>): AccessSource => view.access.source ?? 'public';
/** Admins and members check in (on goals they can edit); viewers never. */
export const checkinCollectionChecks = (ctx: DomainCtx): Checks => ({ can_create: canWriteContent(ctx.caller) });

/** `data = { type: 'checkin', record, checks, access_source }` (get, create). */
export async function checkinRecordResponse(ctx: DomainCtx, status: number, view: CheckinView) {
  return recordResponse(status, 'checkin', await presentCheckin(ctx, view.checkin), checkinChecks(view), checkinAccessSource(view));
}
