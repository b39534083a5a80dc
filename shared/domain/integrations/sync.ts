import type { Caller } from '#shared/auth/caller.ts';
import { callerTeamUuids, serviceAccountCaller } from '#shared/auth/load-caller.ts';
import { secretBox } from '#shared/auth/secret-box.ts';
import { orStored, runCommand } from '#shared/command/run.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import type { WriteTx } from '#shared/db/write-tx.ts';
import { checkinEntity } from '#shared/domain/checkins/entity.ts';
import { createCheckin, type CheckinView } from '#shared/domain/checkins/service.ts';
import { newId } from '#shared/ids.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalEntity } from '#shared/domain/goals/entity.ts';
import {
  creatorKindOf,
  dataSourceEntity,
  dataSourceSyncEntity,
  runUuid,
  SOURCE_WRITE_SCOPE,
  type DataSourceRecord,
  type DataSourceSyncRecord,
  type SyncMessage,
  type SyncStatus,
  type SyncTrigger,
} from '#shared/domain/integrations/entity.ts';
import { fetchJson, type FetchOutcome } from '#shared/domain/integrations/fetch-json.ts';
import { headersRefusal, numberAt, SYNC_BODY_CAP, sourceAfterSync, type HttpJsonConfig } from '#shared/domain/integrations/sync-rules.ts';
import { syncDueItem } from '#shared/domain/integrations/sync-due.ts';
import { addFailingNotice, emailFailingNotice, failingNoticeUuid } from '#shared/domain/integrations/sync-notices.ts';
import { decideServiceCreator } from '#shared/domain/service-accounts/decide.ts';
import { serviceAccountEntity } from '#shared/domain/service-accounts/entity.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import { resolveSafeTarget, type Resolve, type SafeTarget } from '#shared/outbound/url-safety.ts';
import { accept } from '#shared/decision.ts';
import { AppError } from '#shared/errors.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import { logger, type Log } from '#shared/logger.ts';
import type { Email } from '#shared/email/mailer.ts';
import { nowIso } from '#shared/clock.ts';

/*
 * One sync of a data source (contract section 16): fetch (http_json) or take (push) a number, and write it as a
 * check-in through the same command as the API, attributed to the source's creator, when it differs from the
 * goal's current value. Every attempt is logged (a sync record); every failure is a failed sync, never a
 * crash. A run is named (the due time of a scheduled run, an id for a manual one): its check-in's and its
 * sync record's uuids derive from the source and the run, so a worker killed mid-sync and run again writes at
 * most one check-in for that run and logs it once.
 */

/**
 * The sealing of a source's header values is bound to its tenant, its source and the origin they were given for
 * (contract 19): a sealed value copied to another source, or opened for another origin, does not open.
 */
export const headersContext = (tenantId: string, dataSourceUuid: string, origin: string) => ({
  tenant_uuid: tenantId,
  data_source_uuid: dataSourceUuid,
  origin,
});

export const syncSettings = {
  /** A source must answer within this (contract: 10 s); the tests shorten it. */
  get timeoutMs(): number {
    const n = Number(process.env.DATA_SOURCE_TIMEOUT_MS);
    return Number.isFinite(n) && n > 0 ? n : 10_000;
  },
};

/** The tenant's budget's answer to one sync: granted, or refused until about `retryAfterSeconds` from now. */
export type SyncBudget = { granted: true } | { granted: false; retryAfterSeconds: number };

export interface SyncDeps {
  /** Sends the creator's e-mail when a source turns failing (workers only). */
  sendEmail: (e: Email) => Promise<string>;
  /**
   * Charges one unit of the tenant's budget for a sync (contract 19), as a request of the source's creator (the
   * worker passes the API's limiter, RateLimiter.take, so a sync shares the budget with the tenant's requests).
   */
  budget: (tenantId: string, userId: string) => Promise<SyncBudget>;
  /** Sends a run again after a delay (the sync queue): a manual run the budget refused is tried again, not lost. */
  later: (msg: SyncMessage, delaySeconds: number) => Promise<void>;
  /** DNS (tests pass a fake: an SSRF test never connects anywhere). */
  resolve?: Resolve;
  /** The fetch of a checked target (tests may fake it). */
  fetch?: (target: SafeTarget, headers: Record<string, string>, opts: { timeoutMs: number; bodyCap: number }) => Promise<FetchOutcome>;
  log?: Pick<Log, 'info' | 'warn' | 'error'>;
}

interface Outcome {
  status: SyncStatus;
  value: number | null;
  error: string | null;
  checkin_uuid: string | null;
}

const failed = (error: string): Outcome => ({ status: 'failed', value: null, error, checkin_uuid: null });

/**
 * The creator as the caller of the check-in command, as it is now, or why the source can no longer write: by the kind
 * the source records (none: a user), an active user, or a service account that is active and still holds the scope
 * of the check-in among its scopes of now (decideServiceCreator; no token presents any), as its pushes are admitted.
 */
async function creatorCaller(data: DataCtx, source: DataSourceRecord): Promise<Caller | string> {
  if (creatorKindOf(source) === 'service_account') {
    // read strongly consistent, as its tokens' reads are: a disabled or narrowed account writes nothing from then on
    const account = (await getEntity(data, serviceAccountEntity, source.creator_uuid, true))?.record;
    const admitted = decideServiceCreator(account, SOURCE_WRITE_SCOPE);
    return 'error' in admitted ? admitted.error.message : serviceAccountCaller(data.tenantId, account!, admitted.scopes);
  }
  const user = (await getEntity(data, userEntity, source.creator_uuid))?.record;
  if (user?.status !== 'active') return "the data source's creator is no longer active";
  return { tenantId: data.tenantId, userId: user.uuid, role: user.role, user };
}

async function creatorCtx(data: DataCtx, source: DataSourceRecord, requestId: string): Promise<DomainCtx | string> {
  const caller = await creatorCaller(data, source);
  if (typeof caller === 'string') return caller;
  let teams: Promise<Set<string>> | undefined;
  return {
    ...data,
    caller,
    loader: new Loader(data),
    log: logger,
    requestId,
    teams: () => (teams ??= callerTeamUuids(data, caller.userId)),
  };
}

/**
 * A number for the source's goal: unchanged when the goal already holds it, else a check-in (uuid derived
 * from the run) through the API's check-in command. A refusal of the command (the creator lost edit rights,
 * the goal was archived) is a failed sync.
 */
export async function applyValue(
  data: DataCtx,
  source: DataSourceRecord,
  value: number,
  checkinUuid: string,
  extra: { checkin_date?: string; note?: string | null } = {},
): Promise<Outcome> {
  const ctx = await creatorCtx(data, source, `data-source-${source.uuid}`);
  if (typeof ctx === 'string') return failed(ctx);
  const goal = (await getEntity(data, goalEntity, source.goal_uuid, true))?.record;
  if (!goal || goal.discarded_at) return failed('the goal is deleted');
  if (goal.current_value === value && extra.checkin_date === undefined && !extra.note)
    return { status: 'unchanged', value, error: null, checkin_uuid: null };
  try {
    const view = await createCheckin(
      ctx,
      {
        goal_uuid: goal.uuid,
        value,
        // the goal's status stays what it is: a number arriving says nothing about it
        status: goal.current_status,
        ...(extra.checkin_date ? { checkin_date: extra.checkin_date } : {}),
        ...(extra.note ? { note: extra.note } : {}),
        source: 'data_source',
        data_source_uuid: source.uuid,
      },
      { checkinUuid },
    );
    return { status: 'succeeded', value, error: null, checkin_uuid: view.checkin.uuid };
  } catch (err) {
    if (err instanceof AppError && err.status < 500) return failed(`the check-in was refused: ${err.message}`);
    throw err;
  }
}

/** Fetches an http_json source's number: the URL checked again after DNS (SSRF guard), the sealed headers opened. */
async function fetchValue(data: DataCtx, source: DataSourceRecord, deps: SyncDeps): Promise<{ value: number } | { error: string }> {
  const config = source.config as unknown as HttpJsonConfig;
  let target: SafeTarget;
  try {
    target = await resolveSafeTarget(config.url, deps.resolve);
  } catch (err) {
    return { error: (err as Error).message };
  }
  // the header values go only to the origin they were given for, whatever wrote the record (contract 19)
  const refusal = headersRefusal(source, target.url);
  if (refusal) return { error: refusal };
  const headers = source.headers_sealed
    ? (JSON.parse(await secretBox().open(source.headers_sealed, headersContext(data.tenantId, source.uuid, target.url.origin))) as Record<
        string,
        string
      >)
    : {};
  const fetched = await (deps.fetch ?? fetchJson)(target, headers, { timeoutMs: syncSettings.timeoutMs, bodyCap: SYNC_BODY_CAP });
  if (!fetched.ok) return { error: fetched.error };
  return numberAt(fetched.body, config.json_pointer);
}

/**
 * Logs the attempt and moves the source (status, last_*, failures, next due time) in one transaction; the
 * source turning `failing` adds its creator's in-app notice (its e-mail follows: emailFailingNotice). A run
 * already logged (a redelivered message) answers the stored record and changes nothing.
 */
export async function recordSync(
  data: DataCtx,
  sourceUuid: string,
  sync: { uuid: string; trigger: SyncTrigger } & Outcome,
): Promise<{ sync: DataSourceSyncRecord; source?: DataSourceRecord; noticeUuid?: string }> {
  return runCommand(data, {
    read: () => getEntity(data, dataSourceEntity, sourceUuid, true),
    decide: (current, now) => accept({ now, after: current ? sourceAfterSync(current.record, sync, now) : undefined }),
    write: (tx: WriteTx, { now, after }, current) => {
      const record: DataSourceSyncRecord = {
        uuid: sync.uuid,
        data_source_uuid: sourceUuid,
        at: now,
        trigger: sync.trigger,
        status: sync.status,
        value: sync.value,
        error: sync.error,
        checkin_uuid: sync.checkin_uuid,
        created_at: now,
        updated_at: now,
      };
      tx.create(dataSourceSyncEntity, record);
      let noticeUuid: string | undefined;
      if (current && after) {
        tx.replace(dataSourceEntity, current, after.source);
        syncDueItem(tx, data.tenantId, after.source, sourceUuid);
        if (after.becameFailing) noticeUuid = addFailingNotice(tx, after.source, now);
      }
      return { sync: record, source: after?.source, noticeUuid };
    },
    stored: orStored(dataSourceSyncEntity, sync.uuid, (stored) => ({ sync: stored })),
  });
}

/** SQS delays a message at most 15 minutes. */
const MAX_DELAY_SECONDS = 900;

/**
 * The worker's one message: a run of an http_json source (scheduled or asked for). A run about to fetch is first
 * charged one unit of the tenant's budget (deps.budget); refused, it is `deferred`: nothing is fetched, logged or
 * counted as a failure, and it is tried again later: a scheduled run by the sweep, which names it every minute
 * while the source stays due (its due time moves only once a run is logged), a manual one by a delayed message of
 * its own (deps.later). Runs that end without a fetch (stale, already logged, recovered) cost nothing.
 */
export async function runSync(
  data: DataCtx,
  msg: SyncMessage,
  deps: SyncDeps,
): Promise<{ data_source_uuid: string; run: string; outcome: SyncStatus | 'skipped' | 'deferred'; reason?: string }> {
  const base = { data_source_uuid: msg.data_source_uuid, run: msg.run };
  const source = (await getEntity(data, dataSourceEntity, msg.data_source_uuid, true))?.record;
  if (source?.kind !== 'http_json') return { ...base, outcome: 'skipped', reason: 'no such http_json source' };
  // a scheduled run names its due time: another (an earlier duplicate's, or a paused source's) is stale
  if (msg.trigger === 'schedule' && source.next_run_at !== msg.run) return { ...base, outcome: 'skipped', reason: 'stale schedule' };
  const syncUuid = runUuid(source.uuid, msg.run, 'sync');
  const logged = (await getEntity(data, dataSourceSyncEntity, syncUuid, true))?.record;
  if (logged) {
    // redelivered after the log: the e-mail of a notice this run wrote may not have gone out (its marker says)
    if (source.status === 'failing') await emailFailingNotice(data, failingNoticeUuid(source.uuid, logged.at), deps.sendEmail, nowIso);
    return { ...base, outcome: 'skipped', reason: 'already logged' };
  }
  const checkinUuid = runUuid(source.uuid, msg.run, 'checkin');
  // a run killed after its check-in and before its log: that check-in is the run's outcome, nothing is fetched again
  const earlier = (await getEntity(data, checkinEntity, checkinUuid, true))?.record;
  let outcome: Outcome;
  if (earlier) outcome = { status: 'succeeded', value: earlier.value, error: null, checkin_uuid: earlier.uuid };
  else {
    const budget = await deps.budget(data.tenantId, source.creator_uuid);
    if (!budget.granted) {
      const delay = Math.min(MAX_DELAY_SECONDS, Math.max(1, Math.ceil(budget.retryAfterSeconds)));
      if (msg.trigger === 'manual') await deps.later(msg, delay);
      const when = msg.trigger === 'manual' ? `in about ${delay} s` : 'by the next sweep';
      return { ...base, outcome: 'deferred', reason: `refused by the tenant's rate limit: tried again ${when}` };
    }
    const fetched = await fetchValue(data, source, deps);
    outcome = 'error' in fetched ? failed(fetched.error) : await applyValue(data, source, fetched.value, checkinUuid);
  }
  const written = await recordSync(data, source.uuid, { uuid: syncUuid, trigger: msg.trigger, ...outcome });
  // after the commit, so the notice exists whatever happens to the e-mail; a failed send redelivers the message
  if (written.noticeUuid) await emailFailingNotice(data, written.noticeUuid, deps.sendEmail, nowIso);
  return { ...base, outcome: outcome.status, ...(outcome.error ? { reason: outcome.error } : {}) };
}

/**
 * The message of a run asked for now (POST /data_sources/{id}/sync). Its name is seeded under an Idempotency-Key
 * (shared/ids.ts): a retry of a request that queued its run and died before answering names the same run, which
 * the worker runs once, rather than a second one.
 */
export const manualRun = (tenantId: string, dataSourceUuid: string): SyncMessage => ({
  version: 1,
  tenant_uuid: tenantId,
  data_source_uuid: dataSourceUuid,
  run: `manual-${newId()}`,
  trigger: 'manual',
});

export interface PushInput {
  value: number;
  checkin_date?: string;
  note?: string | null;
}

/**
 * POST /data_sources/{id}/values: the pushed number as a check-in of the source's goal, written by its creator
 * (`ctx`: the push route's caller) through the API's check-in command, whatever the goal's current value (a
 * push is a deliberate report). Logged as a `push` sync; a refused check-in is logged failed and answered.
 */
export async function pushValue(ctx: DomainCtx, source: DataSourceRecord, input: PushInput): Promise<CheckinView> {
  const checkinUuid = newId(); // seeded under an Idempotency-Key: a retried push names the same check-in
  const syncUuid = runUuid(source.uuid, `push-${checkinUuid}`, 'sync');
  const goal = (await getEntity(ctx, goalEntity, source.goal_uuid, true))?.record;
  try {
    const view = await createCheckin(
      ctx,
      {
        goal_uuid: source.goal_uuid,
        value: input.value,
        ...(goal ? { status: goal.current_status } : {}),
        ...(input.checkin_date ? { checkin_date: input.checkin_date } : {}),
        ...(input.note !== undefined ? { note: input.note } : {}),
        source: 'data_source',
        data_source_uuid: source.uuid,
      },
      { checkinUuid },
    );
    await recordSync(ctx, source.uuid, {
      uuid: syncUuid,
      trigger: 'push',
      status: 'succeeded',
      value: input.value,
      error: null,
      checkin_uuid: view.checkin.uuid,
    });
    return view;
  } catch (err) {
    if (err instanceof AppError && err.status < 500)
      await recordSync(ctx, source.uuid, { uuid: syncUuid, trigger: 'push', ...failed(`the check-in was refused: ${err.message}`) });
    throw err;
  }
}
