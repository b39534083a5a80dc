import { expect } from 'vitest';
import { callerTeamUuids } from '#shared/auth/load-caller.ts';
import { baseDb } from '#shared/db/client.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { goalEntity, type GoalRecord } from '#shared/domain/goals/entity.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import { logger } from '#shared/logger.ts';
import type { Goal, GoalCreateBody, GoalUpdateBody, Schemas, TimePeriod } from '../../clients/typescript/src/index.ts';
import { newTenant, type Api, type TenantFixture } from '../support/api.ts';
import { answer, typed } from '../support/client.ts';

/** Shared set-up of the goals suites (goals*.test.ts): a tenant with a time period, and quick creators. */
export const KINDS = ['objectives', 'key_results', 'initiatives'] as const;
export type KindPath = (typeof KINDS)[number];
/** A goal kind's collection path (typed: the client's path), or an item path with its uuid for the untyped `Api`. */
export function P(kind: KindPath): `/rest/v2/${KindPath}`;
export function P(kind: KindPath, id: string, suffix?: string): string;
export function P(kind: KindPath, id?: string, suffix = '') {
  return `/rest/v2/${kind}${id ? `/${id}` : ''}${suffix}`;
}

export interface GoalTenant {
  t: TenantFixture;
  period: TimePeriod;
}

export async function createPeriod(api: Api, name: string, start_date: string, end_date: string): Promise<TimePeriod> {
  const { data, response } = await typed(api).POST('/rest/v2/time_periods', { body: { name, start_date, end_date } });
  if (!data) throw new Error(`time period create failed: ${response.status}`);
  return data.data.record;
}

export async function goalTenant(): Promise<GoalTenant> {
  const t = await newTenant();
  const period = await createPeriod(t.admin, 'Q1 2025', '2025-01-01', '2025-03-31');
  return { t, period };
}

/** A goal kind's item path as the document names it. */
const item = (kind: KindPath) => `/rest/v2/${kind}/{id}` as const;

/** The goal endpoints through the typed client: paths, bodies and answers checked against docs/openapi.json. */
export const goalApi = (api: Api) => {
  const client = typed(api);
  const id = (uuid: string) => ({ params: { path: { id: uuid } } });
  return {
    create: (kind: KindPath, body: GoalCreateBody) => answer(client.POST(P(kind), { body })),
    get: (kind: KindPath, uuid: string) => answer(client.GET(item(kind), id(uuid))),
    update: (kind: KindPath, uuid: string, body: GoalUpdateBody) => answer(client.PUT(item(kind), { ...id(uuid), body })),
    remove: (kind: KindPath, uuid: string, body?: Schemas['GoalDeleteBody']) =>
      answer(client.DELETE(item(kind), { ...id(uuid), ...(body ? { body } : {}) })),
    archive: (kind: KindPath, uuid: string) => answer(client.POST(`${item(kind)}/archive`, id(uuid))),
    unarchive: (kind: KindPath, uuid: string) => answer(client.POST(`${item(kind)}/unarchive`, id(uuid))),
  };
};

/** Creates a goal with the typed client (201 expected) and returns its record. */
export async function goal(api: Api, kind: KindPath, body: GoalCreateBody): Promise<Goal> {
  const { data, error, response } = await typed(api).POST(P(kind), { body });
  if (!data) throw new Error(`goal create failed: ${response.status} ${JSON.stringify(error)}`);
  expect(data.data.type).toBe(kind.slice(0, -1));
  return data.data.record;
}

export const uuids = (records: Array<{ uuid: string }>) => records.map((r) => r.uuid);
export const sorted = (ids: string[]) => [...ids].sort();

/** Every field of the spec's goal record, plus team_uuids, labels, delegate_uuids, created_at, updated_at. */
export const GOAL_FIELDS = [
  'uuid',
  'type',
  'title',
  'description',
  'start_date',
  'end_date',
  'goal_type',
  'time_period_uuid',
  'current_metric_uuid',
  'creator_uuid',
  'last_checkin_date',
  'score',
  'current_progress',
  'current_value',
  'current_status',
  'status',
  'source_uuid',
  'source_type',
  'path',
  'searchable_content',
  'progress_mode',
  'value_updated_at',
  'status_updated_at',
  'value_updated_by_uuid',
  'status_updated_by_uuid',
  'visibility',
  'ai_rollup_enabled',
  'data_sources_count',
  'discarded_at',
  'discarded_by_uuid',
  'short_id_uuid',
  'archived_at',
  'archived_by_uuid',
  'short_id',
  'owner_uuids',
  'target',
  'unit',
  'metric_type',
  'parent_links',
  'visible_entities',
  'checkin_due_days',
  'delegate_uuid',
  'delegate_uuids',
  'partner_goals_external_id',
  'team_uuids',
  'labels',
  'created_at',
  'updated_at',
  'expected_progress',
  'pace', // contract 13
].sort();

/** What a domain call read, counted at the DynamoDB client. */
export interface Counts {
  /** Full items read (GetItem, BatchGetItem). */
  items: number;
  queries: number;
  /** Index or partition rows a Query went through. */
  keys: number;
  scans: number;
}

/**
 * A DomainCtx acting as `userUuid` whose DynamoDB client counts what it reads: `counts` in total, `kinds`
 * the items read per kind (`goal`, `checkin`, `label`, ...), `calls` the round trips per command, `txItems` the
 * items of each transaction sent. `hideIndex` drops the rows of the GSI1
 * partitions it matches from Query answers, as an index that has not caught up with a write yet would.
 * `beforeTransact(n)` runs before the n-th transaction (0 first) is sent: a concurrent write landing there.
 */
export async function countingCtx(
  fixture: TenantFixture,
  userUuid: string,
  opts: { hideIndex?: (partition: string) => boolean; beforeTransact?: (n: number) => Promise<void> } = {},
) {
  const counts: Counts = { items: 0, queries: 0, keys: 0, scans: 0 };
  const kinds: Record<string, number> = {};
  const calls: Record<string, number> = {};
  /** Items of each transaction sent (TransactWriteItems), in order. */
  const txItems: number[] = [];
  const seen = (item: Record<string, unknown>) => {
    counts.items += 1;
    kinds[item.kind as string] = (kinds[item.kind as string] ?? 0) + 1;
  };
  const db = baseDb();
  let transactions = 0;
  const counted = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return async (command: { constructor: { name: string }; input: Record<string, any> }) => {
        const name = command.constructor.name;
        calls[name] = (calls[name] ?? 0) + 1;
        if (name === 'TransactWriteCommand') {
          txItems.push((command.input.TransactItems as unknown[]).length);
          await opts.beforeTransact?.(transactions++);
        }
        const out = (await target.send(command as never)) as Record<string, any>;
        if (name === 'GetCommand') {
          if (out.Item) seen(out.Item);
        } else if (name === 'BatchGetCommand') {
          for (const items of Object.values(out.Responses ?? {}) as Array<Array<Record<string, unknown>>>) items.forEach(seen);
        } else if (name === 'QueryCommand') {
          counts.queries += 1;
          counts.keys += out.ScannedCount ?? 0;
          const pk = command.input.ExpressionAttributeValues?.[':pk'];
          if (command.input.IndexName === 'GSI1' && opts.hideIndex?.(pk))
            return { ...out, Items: [], Count: 0, ScannedCount: 0, LastEvaluatedKey: undefined };
        } else if (name === 'ScanCommand') counts.scans += 1;
        return out;
      };
    },
  });
  const data: DataCtx = { tenantId: fixture.tenantUuid, db: counted };
  const record = (await getEntity({ tenantId: fixture.tenantUuid, db }, userEntity, userUuid))!.record;
  let teams: Promise<Set<string>> | undefined;
  const ctx: DomainCtx = {
    ...data,
    caller: { tenantId: fixture.tenantUuid, userId: record.uuid, role: record.role, user: record },
    loader: new Loader(data),
    log: logger,
    requestId: 'test',
    teams: () => (teams ??= callerTeamUuids(data, record.uuid)),
  };
  return { ctx, counts, kinds, calls, txItems };
}

/** Goals written straight to the table (as the store's create writes them), 20 a transaction. */
export async function writeGoals(data: DataCtx, goals: GoalRecord[]) {
  const batches: GoalRecord[][] = [];
  for (let i = 0; i < goals.length; i += 20) batches.push(goals.slice(i, i + 20));
  await Promise.all(
    batches.map(async (batch) => {
      const tx = new WriteTx(data);
      for (const g of batch) tx.create(goalEntity, g);
      await tx.commit();
    }),
  );
}
