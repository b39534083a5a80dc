import { expect } from 'vitest';
import { createDynamoClient, instrument } from '#shared/db/client.ts';
import { mutateEntity } from '#shared/command/run.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { goalEntity, type GoalRecord } from '#shared/domain/goals/entity.ts';
import type { Checkin, CheckinCreateBody, CheckinUpdateBody, Goal } from '../../clients/typescript/src/index.ts';
import type { Api } from '../support/api.ts';
import { answer, typed } from '../support/client.ts';

/** Shared set-up of the check-in suites (checkins*.test.ts). */
export const CHECKINS = '/rest/v2/checkins' as const;
export const C = (id: string) => `${CHECKINS}/${id}`;

/** Every field of a check-in record. */
export const CHECKIN_FIELDS = [
  'uuid',
  'goal_uuid',
  'metric_uuid',
  'value',
  'progress',
  'score',
  'checkin_date',
  'status',
  'note',
  'creator_uuid',
  'source_info',
  'source',
  'data_source_uuid',
  'mentioned_entities',
  'labels',
  'created_at',
  'updated_at',
].sort();

/** The check-in endpoints through the typed client: paths, bodies and answers checked against docs/openapi.json. */
export const checkinApi = (api: Api) => {
  const client = typed(api);
  const id = (uuid: string) => ({ params: { path: { id: uuid } } });
  return {
    create: (body: CheckinCreateBody) => answer(client.POST(CHECKINS, { body })),
    get: (uuid: string) => answer(client.GET(`${CHECKINS}/{id}`, id(uuid))),
    update: (uuid: string, body: CheckinUpdateBody) => answer(client.PUT(`${CHECKINS}/{id}`, { ...id(uuid), body })),
    remove: (uuid: string) => answer(client.DELETE(`${CHECKINS}/{id}`, id(uuid))),
  };
};

/** Creates a check-in with the typed client (201 expected) and returns its record. */
export async function checkin(api: Api, body: CheckinCreateBody): Promise<Checkin> {
  const { data, error, response } = await typed(api).POST(CHECKINS, { body });
  if (!data) throw new Error(`check-in create failed: ${response.status} ${JSON.stringify(error)}`);
  expect(data.data.type).toBe('checkin');
  return data.data.record;
}

/** GET of a goal of any kind, by its record's `type`, with the typed client. */
export async function goalNow(api: Api, g: { uuid: string; type: string }): Promise<Goal> {
  const { data, error, response } = await typed(api).GET(`/rest/v2/${g.type as 'objective' | 'key_result' | 'initiative'}s/{id}`, {
    params: { path: { id: g.uuid } },
  });
  if (!data) throw new Error(`goal get failed: ${response.status} ${JSON.stringify(error)}`);
  return data.data.record;
}

/** The goal fields that follow its latest check-in. */
export const followed = (g: any) => ({
  current_value: g.current_value,
  current_progress: g.current_progress,
  current_status: g.current_status,
  score: g.score,
  last_checkin_date: g.last_checkin_date,
});

/**
 * The goals API sets every parent link's contribution_percent to 100 and offers no way to change it, so
 * the weighted rollup is exercised by setting the contribution directly in the table (as a future API or
 * an operator would), then triggering a recompute with a check-in.
 */
export async function setContribution(tenantId: string, childUuid: string, parentUuid: string, percent: number): Promise<void> {
  const ctx: DataCtx = { tenantId, db: instrument(createDynamoClient()) };
  await mutateEntity(
    ctx,
    goalEntity,
    childUuid,
    (s) =>
      ({
        ...s.record,
        parent_links: s.record.parent_links.map((l) => (l.parent_uuid === parentUuid ? { ...l, contribution_percent: percent } : l)),
      }) as GoalRecord,
    () => new Error('no such goal') as never,
  );
}
