import { scopedUuidOf } from '#shared/domain/scoped-id.ts';
import { newId } from '#shared/ids.ts';
import type { AccessSource, Checks } from '#shared/auth/permissions.ts';
import { runCommand } from '#shared/command/run.ts';
import { BatchRead, getEntity } from '#shared/db/reads.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalAccess } from '#shared/domain/goals/access.ts';
import { goalEditRefusal, type GoalAccess } from '#shared/domain/goals/refusals.ts';
import { readableGoal } from '#shared/domain/goals/reads.ts';
import { goalEntity } from '#shared/domain/goals/entity.ts';
import {
  dataSourceConfigRefusal,
  decideCreateDataSource,
  newDataSource,
  sourceCreatorScopeRefusal,
  tooManyDataSources,
  updatedDataSource,
  type DataSourceCommand,
  type DataSourceUpdateCommand,
} from '#shared/domain/integrations/decide.ts';
import { dataSourceEntity, type DataSourceRecord } from '#shared/domain/integrations/entity.ts';
import { dueKey as dueKeyOf } from '#shared/domain/integrations/sync-due.ts';
import { NotFoundError, ValidationError } from '#shared/errors.ts';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { secretBox } from '#shared/auth/secret-box.ts';
import type { SyncSettings } from '#shared/domain/integrations/decide.ts';
import { addDueItem, syncDueItem } from '#shared/domain/integrations/sync-due.ts';
import { httpJsonSettings, originOf, sortedHeaderNames, type HttpJsonConfig } from '#shared/domain/integrations/sync-rules.ts';
import { DATA_SOURCE_SYNC_QUEUE, dataSourceSyncEntity, MAX_DATA_SOURCES_PER_TENANT } from '#shared/domain/integrations/entity.ts';
import { headersContext, manualRun } from '#shared/domain/integrations/sync.ts';
import { resolveSafeTarget } from '#shared/outbound/url-safety.ts';
import { accept, refuse } from '#shared/decision.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { keys } from '#shared/db/keys.ts';
import { partitionEntries } from '#shared/db/index-queries.ts';
import { getSide, type SideItem } from '#shared/db/side-items.ts';
import type { WriteTx } from '#shared/db/write-tx.ts';
import { ConcurrentUpdateError } from '#shared/errors.ts';
import type { QueueSender } from '#shared/queue/queue.ts';
import { runList } from '#shared/list/engine.ts';
import type { ListResource } from '#shared/list/resource.ts';

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

export async function createDataSource(ctx: DomainCtx, input: DataSourceCommand): Promise<DataSourceView & { pushSecret?: string }> {
  const uuid = newId();
  const goalUuid = input.goal_uuid.toLowerCase();
  const hidden = () => unknownGoal(goalUuid);
  let sync: SyncSettings | undefined; // sealed once, in the precheck: every attempt writes the same
  const pushSecret = input.kind === 'push' ? newPushSecret(ctx.tenantId) : undefined;
  // One read of the goal: the permission checks run on the consistent read the write is conditioned on.
  return runCommand(ctx, {
    precheck: async () => {
      const refusal = sourceCreatorScopeRefusal(ctx.caller, input.kind) ?? dataSourceConfigRefusal(input);
      if (refusal) return refusal;
      sync = await syncSettingsOf(ctx.tenantId, uuid, input.kind, input.config ?? {}, undefined, pushSecret);
      return undefined;
    },
    read: async () => {
      // the goal and the tenant's count in one BatchGetItem (strongly consistent)
      const batch = new BatchRead(ctx);
      const goals = batch.entities(goalEntity, [goalUuid]);
      const counter = batch.side(sourceCountKey(ctx.tenantId));
      await batch.run();
      const current = goals().get(goalUuid);
      if (!current) return undefined;
      const [count, access] = await Promise.all([sourceCount(ctx, counter()), goalAccess(ctx, current.record)]);
      return { current, count, access };
    },
    decide: (s, now) => decideCreateDataSource(s?.current.record, s?.access, s?.count.n ?? 0, now, hidden),
    write: (tx, goal, s, { now }) => {
      // identity and time are the command's: every attempt writes the same record
      const dataSource = newDataSource(ctx.caller, input, now, uuid, sync);
      tx.create(dataSourceEntity, dataSource).replace(goalEntity, s!.current, goal);
      countSources(ctx, tx, s!.count, +1);
      if (dataSource.next_run_at) addDueItem(tx, ctx.tenantId, dataSource);
      return { dataSource, access: s!.access, ...(pushSecret ? { pushSecret } : {}) };
    },
  });
}

/**
 * The tenant's count of data sources (contract 19: at most MAX_DATA_SOURCES_PER_TENANT), one side item that every
 * create and delete writes in its own transaction, so it is exact under concurrent creates and deletes: a create
 * adds one only while the count is below the cap (a failed condition is the 422; two creates racing for the last
 * place conflict, and the retry reads the count again), a delete takes one off. A tenant without the item
 * (sources from before it) starts from its list of sources, and that first write is conditioned on the item
 * still being absent, so two first writes cannot both start it.
 */
const sourceCountKey = (tenantId: string) => keys.misc(tenantId, 'data_source_count', 'all');

interface SourceCount {
  n: number;
  stored: boolean;
}

/** The count as its item holds it (read by the caller), or counted from the tenant's list of sources without one. */
async function sourceCount(ctx: DataCtx, counter: SideItem | undefined): Promise<SourceCount> {
  if (counter) return { n: Number(counter.n), stored: true };
  let n = 0;
  for await (const _ of partitionEntries(ctx, keys.entityList(ctx.tenantId, dataSourceEntity.type))) n++;
  return { n, stored: false };
}

function countSources(ctx: DataCtx, tx: WriteTx, count: SourceCount, by: 1 | -1): void {
  const key = sourceCountKey(ctx.tenantId);
  if (!count.stored)
    tx.putSide(key, { n: Math.max(0, count.n + by) }, { if: { exists: false }, onFail: () => new ConcurrentUpdateError() });
  else if (by > 0)
    tx.updateSide(key, { set: {}, add: { n: 1 }, if: { atMost: { n: MAX_DATA_SOURCES_PER_TENANT - 1 } } }, tooManyDataSources);
  else tx.updateSide(key, { set: {}, add: { n: -1 }, if: { exists: true } }, () => new ConcurrentUpdateError());
}

/**
 * The data source uuid named by a path id: `<tenant_uuid>_<data_source_uuid>` or the bare uuid. A prefix
 * naming another tenant, or anything that is not a uuid, names nothing in the caller's tenant: 404, never a
 * hint that the data source exists elsewhere.
 */
export function dataSourceUuidOf(tenantId: string, id: string): string {
  return scopedUuidOf(tenantId, id, () => notFound(id));
}

const isDataSourceId = (tenantId: string, id: string) => {
  try {
    dataSourceUuidOf(tenantId, id);
    return true;
  } catch {
    return false;
  }
};

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

// ---------- sync settings (contract section 16) ----------

/** A push secret: `dsp_` + the tenant (so the push route finds its tenant without a token) + 32 random bytes. */
export function newPushSecret(tenantId: string): string {
  return `dsp_${tenantId.replace(/-/g, '')}_${randomBytes(32).toString('base64url')}`;
}
const hashSecret = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');

/** The tenant a push secret names (a uuid), or undefined for anything else. */
export function tenantOfPushSecret(secret: string): string | undefined {
  const m = /^dsp_([0-9a-f]{32})_[A-Za-z0-9_-]{43}$/.exec(secret);
  if (!m) return undefined;
  const h = m[1]!;
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Whether `secret` is the source's push secret: hashes compared in constant time. */
export function pushSecretMatches(source: DataSourceRecord, secret: string): boolean {
  if (!source.push_secret_hash) return false;
  const a = Buffer.from(hashSecret(secret), 'hex');
  const b = Buffer.from(source.push_secret_hash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * What a synced kind stores (config as shown, sealed header values, push secret hash), or its 422: an
 * http_json config's rules and its URL's (the webhook rules: https, and deployed, public addresses only, after
 * DNS); a push source takes no config. Other kinds: undefined (config stays opaque). `current`: the stored
 * source a PUT changes.
 */
async function syncSettingsOf(
  tenantId: string,
  uuid: string,
  kind: string,
  config: Record<string, unknown>,
  current?: DataSourceRecord,
  pushSecret?: string,
): Promise<SyncSettings | undefined> {
  if (kind === 'push') {
    if (Object.keys(config).length)
      throw ValidationError.field('config', 'not_allowed', 'a push source takes no config: its values are posted to it');
    return { config: {}, ...(pushSecret ? { push_secret_hash: hashSecret(pushSecret) } : {}) };
  }
  if (kind !== 'http_json') return undefined;
  const settings = httpJsonSettings(config, current?.config as HttpJsonConfig | undefined);
  if ('errors' in settings) throw new ValidationError('config is not a valid http_json config', settings.errors);
  try {
    await resolveSafeTarget(settings.config.url);
  } catch (err) {
    throw ValidationError.field('config.url', 'unsafe_url', (err as Error).message);
  }
  // header values sent are bound to the origin of the URL they come with (the seal's context names it too);
  // what a PUT without headers keeps of the stored ones is decided on the record it changes (updatedDataSource)
  if (!settings.headers) return { config: { ...settings.config } };
  const origin = originOf(settings.config.url);
  const names = sortedHeaderNames(settings.headers);
  return {
    config: { ...settings.config },
    headers: names.length
      ? {
          headers_sealed: await secretBox().seal(JSON.stringify(settings.headers), headersContext(tenantId, uuid, origin)),
          headers_origin: origin,
          header_names: names,
        }
      : { headers_sealed: null, headers_origin: null, header_names: [] },
  };
}

/**
 * A source of the caller's tenant with the caller's access to its goal and, unless it may edit it, the refusal
 * (403); undefined when the source or its goal is not there (a command's read: its decide answers 404).
 */
async function readEditableSource(ctx: DomainCtx, id: string) {
  const uuid = dataSourceUuidOf(ctx.tenantId, id);
  const stored = await getEntity(ctx, dataSourceEntity, uuid, true);
  if (!stored) return undefined;
  const goal = await getEntity(ctx, goalEntity, stored.record.goal_uuid, true);
  if (!goal) return undefined;
  const access = await goalAccess(ctx, goal.record);
  return { stored, goal, access, refusal: goalEditRefusal(access) };
}

/** As readEditableSource, 404 thrown (a gate before a command, or a read outside one). */
async function editableSource(ctx: DomainCtx, id: string) {
  const s = await readEditableSource(ctx, id);
  if (!s) throw notFound(id);
  return s;
}

/**
 * PUT /data_sources/{id}: name, config (http_json: fields not sent stay; headers sent replace the old ones; a URL
 * on another origin without headers drops them) and status (active or paused; `failing` is the service's to set).
 * Pausing takes the source off the schedule; making it active again (from paused or failing) puts it back one
 * period from now, its failures forgotten. The rules: updatedDataSource (decide.ts).
 */
export async function updateDataSource(ctx: DomainCtx, id: string, input: DataSourceUpdateCommand): Promise<DataSourceView> {
  const first = await editableSource(ctx, id);
  if (first.refusal) throw first.refusal;
  const current0 = first.stored.record;
  let sync: SyncSettings | undefined;
  if (input.config !== undefined) {
    const refusal = dataSourceConfigRefusal({ kind: current0.kind, config: input.config });
    if (refusal) throw refusal;
    sync = await syncSettingsOf(ctx.tenantId, current0.uuid, current0.kind, input.config, current0);
  }
  return runCommand(ctx, {
    read: () => readEditableSource(ctx, id),
    decide: (s, now) => {
      if (!s) return refuse(notFound(id));
      if (s.refusal) return refuse(s.refusal);
      return accept(updatedDataSource(s.stored.record, input, sync, now));
    },
    write: (tx, next, s) => {
      tx.replace(dataSourceEntity, s!.stored, next);
      syncDueItem(tx, ctx.tenantId, next, next.uuid);
      return { dataSource: next, access: s!.access };
    },
  });
}

/** DELETE /data_sources/{id}: the source, its schedule, one off its goal's data_sources_count and one off the tenant's count. Its sync log expires with its TTL. */
export async function deleteDataSource(ctx: DomainCtx, id: string): Promise<DataSourceView> {
  return runCommand(ctx, {
    // the goal the access check read is the one whose count goes down: no second read of it
    read: async () => {
      const [s, counter] = await Promise.all([readEditableSource(ctx, id), getSide(ctx, sourceCountKey(ctx.tenantId))]);
      return s && { ...s, count: await sourceCount(ctx, counter) };
    },
    decide: (s, now) => (!s ? refuse(notFound(id)) : s.refusal ? refuse(s.refusal) : accept(now)),
    write: (tx, now, found) => {
      const { stored, goal, access, count } = found!;
      tx.remove(dataSourceEntity, stored).deleteSide(dueKeyOf(ctx.tenantId, stored.record.uuid));
      countSources(ctx, tx, count, -1);
      tx.replace(goalEntity, goal, {
        ...goal.record,
        data_sources_count: Math.max(0, (goal.record.data_sources_count ?? 1) - 1),
        updated_at: now,
      });
      return { dataSource: stored.record, access };
    },
  });
}

/** A source the caller may manage (its goal's editors), thrown otherwise: 404 outside the tenant, 403. */
export async function editableDataSource(ctx: DomainCtx, id: string): Promise<DataSourceRecord> {
  const s = await editableSource(ctx, id);
  if (s.refusal) throw s.refusal;
  return s.stored.record;
}

/** POST /data_sources/{id}/sync: queues a run now (http_json only; any status: a paused or failing source may be tried by hand). */
export async function requestSync(ctx: DomainCtx, id: string, queue: QueueSender): Promise<{ data_source_uuid: string; run: string }> {
  const s = await editableSource(ctx, id);
  if (s.refusal) throw s.refusal;
  if (s.stored.record.kind !== 'http_json')
    throw ValidationError.field('kind', 'not_fetched', `only http_json sources are fetched; this one is ${s.stored.record.kind}`);
  const msg = manualRun(ctx.tenantId, s.stored.record.uuid);
  await queue.send(DATA_SOURCE_SYNC_QUEUE, msg);
  return { data_source_uuid: msg.data_source_uuid, run: msg.run };
}

const syncResource = (sourceUuid: string): ListResource<import('#shared/domain/integrations/entity.ts').DataSourceSyncRecord> => ({
  type: 'data_source_sync',
  entity: dataSourceSyncEntity,
  lists: [`data_source_sync#${sourceUuid}`],
  attributes: {
    uuid: { type: 'string', get: (r) => r.uuid },
    status: { type: 'string', get: (r) => r.status },
    trigger: { type: 'string', get: (r) => r.trigger },
    created_at: { type: 'timestamp', get: (r) => r.created_at },
  },
});

/** GET /data_sources/{id}/syncs: the source's attempts newest first (404 outside the tenant, 403 without the goal visible). */
export async function listSyncs(ctx: DomainCtx, id: string, pairs: Array<[string, string]>) {
  // as every list, the query is parsed before the source is looked up (afterParse: 404, visibility): a bad
  // filter is 400 whatever the id, and a malformed id names a list nothing is in, never read past that 404
  const uuid = isDataSourceId(ctx.tenantId, id) ? dataSourceUuidOf(ctx.tenantId, id) : id;
  const sorted = pairs.some(([k]) => k === 'q[s]') ? pairs : [...pairs, ['q[s]', 'created_at desc'] as [string, string]];
  return runList(syncResource(uuid), { ctx, loader: ctx.loader, pairs: sorted, afterParse: () => getDataSource(ctx, id) });
}
