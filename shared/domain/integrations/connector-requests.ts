import { isAdmin } from '#shared/auth/caller.ts';
import { requireAdmin, type AccessSource, type Checks } from '#shared/auth/permissions.ts';
import { nowIso } from '#shared/clock.ts';
import { runCommand } from '#shared/command/run.ts';
import { committedUnlessConditionFails } from '#shared/db/conflict-retries.ts';
import { getEntity } from '#shared/db/reads.ts';
import { getSide } from '#shared/db/side-items.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { connectorOf, decideConnectorRequest, type ConnectorRequestCommand } from '#shared/domain/integrations/decide.ts';
import {
  connectorRequestEntity,
  connectorRequesterKey,
  connectorRequestUuid,
  type ConnectorRequesterItem,
  type ConnectorRequestRecord,
} from '#shared/domain/integrations/entity.ts';
import { SUPPORT_ISSUE_QUEUE, supportIssueKey, type SupportIssueMessage } from '#shared/domain/integrations/support.ts';
import { getTenant } from '#shared/domain/tenants.ts';
import { AppError, ConcurrentUpdateError } from '#shared/errors.ts';
import { runList } from '#shared/list/engine.ts';
import { type ListResource, uuidAttr } from '#shared/list/resource.ts';
import { queueSender } from '#shared/queue/queue.ts';

/*
 * Connector request commands: read, decide (decide.ts, where the rules are), write once. The support issue
 * goes through a queue (the worker calls the support tool's webhook, or acknowledges the message when none
 * is configured): the record is persisted whatever the support tool does.
 */

/** Internal signal: the caller's requester item already exists. Never leaves this module. */
class AlreadyRequested extends AppError {
  constructor() {
    super(409, 'already_requested', 'The caller already requested this connector');
  }
}

export interface ConnectorRequestOutcome {
  record: ConnectorRequestRecord;
  /** The record did not exist before this request (201). */
  created: boolean;
}

/**
 * Records the caller's request for a connector. Concurrency: the record's key is derived from the
 * normalized name and the caller's requester item is a conditional put in the same transaction, so of two
 * concurrent identical requests one creates (or extends) the record and the other either loses the race
 * (retried: it then sees the record) or finds its requester item (a repeat: nothing changes).
 */
export async function recordConnectorRequest(ctx: DomainCtx, input: ConnectorRequestCommand): Promise<ConnectorRequestOutcome> {
  const id = connectorOf(ctx.tenantId, input).uuid;
  const me = ctx.caller.userId;

  const outcome = await runCommand(ctx, {
    read: () => getEntity(ctx, connectorRequestEntity, id, true),
    decide: (current, now) => decideConnectorRequest(ctx.caller, ctx.tenantId, input, current?.record, now),
    write: (
      tx,
      { record, created, requester },
      current,
    ): { record: ConnectorRequestRecord; created: boolean; repeat?: ConnectorRequesterItem } => {
      // The requester claim goes first: when both it and the record's condition fail, the repeat is what is reported.
      tx.putSide(
        connectorRequesterKey(ctx.tenantId, id, me),
        { kind: 'connector_requester', ...requester },
        { if: { exists: false }, onFail: () => new AlreadyRequested() },
      );
      if (current) tx.replace(connectorRequestEntity, current, record);
      else tx.create(connectorRequestEntity, record);
      return { record, created };
    },
    // a repeat: the requester item is only ever written together with the record, so the record exists now
    recover: async (err, current) => {
      if (!(err instanceof AlreadyRequested)) return undefined;
      const stored = current ?? (await getEntity(ctx, connectorRequestEntity, id, true));
      if (!stored) throw new ConcurrentUpdateError();
      return { record: stored.record, created: false, repeat: await requesterItem(ctx, id, me) };
    },
  });

  // A repeat re-queues the issue only if the first attempt failed between its commit and its enqueue (it
  // answered 500 then): a client retry is how that requester's issue still reaches the support tool.
  if (!outcome.repeat) await raiseSupportIssue(ctx, outcome.record, nowIso());
  else if (!outcome.repeat.issue_queued_at) await raiseSupportIssue(ctx, outcome.record, outcome.repeat.requested_at);
  return { record: outcome.record, created: outcome.created };
}

async function requesterItem(ctx: DomainCtx, requestUuid: string, userUuid: string): Promise<ConnectorRequesterItem | undefined> {
  return (await getSide(ctx, connectorRequesterKey(ctx.tenantId, requestUuid, userUuid))) as ConnectorRequesterItem | undefined;
}

/** Hands the caller's issue to the support-issue worker, then marks the requester item so retries do not queue it again. */
async function raiseSupportIssue(ctx: DomainCtx, record: ConnectorRequestRecord, requestedAt: string): Promise<void> {
  const tenant = await getTenant(ctx);
  const user = ctx.caller.user;
  const message: SupportIssueMessage = {
    version: 1,
    idempotency_key: supportIssueKey(ctx.tenantId, record.uuid, user.uuid),
    tenant: { uuid: ctx.tenantId, name: tenant?.name ?? null },
    requester: { uuid: user.uuid, display_name: user.display_name, email: user.email },
    connector_request: {
      uuid: record.uuid,
      connection_type: record.connection_type,
      normalized_key: record.normalized_key,
      connector_display_name: record.connector_display_name,
      request_source: record.request_source,
      request_count: record.request_count,
    },
    requested_at: requestedAt,
  };
  await queueSender().send(SUPPORT_ISSUE_QUEUE, message);
  // a failed condition: the requester item is gone (the mark never creates one), nothing to mark
  await committedUnlessConditionFails(() =>
    new WriteTx(ctx).updateSide(connectorRequesterKey(ctx.tenantId, record.uuid, user.uuid), {
      set: { issue_queued_at: nowIso() },
      if: { exists: true },
    }),
  );
}

// ---------- presentation and the admin list ----------

/** Any member may request (and so sees what it requested); only admins read the tenant's whole list. */
export const connectorRequestChecks = (ctx: DomainCtx): Checks => ({ can_list: isAdmin(ctx.caller) });
export const connectorRequestAccessSource = (ctx: DomainCtx): AccessSource => (isAdmin(ctx.caller) ? 'admin' : 'creator');
export const connectorRequestCollectionChecks = (_ctx: DomainCtx): Checks => ({ can_create: true });

export const connectorRequestListResource: ListResource<ConnectorRequestRecord> = {
  type: 'connector_request',
  entity: connectorRequestEntity,
  lists: ['connector_request'],
  driverOrder: ['uuid', 'normalized_key'],
  attributes: {
    uuid: uuidAttr(),
    // The uuid is derived from the normalized key, so an exact normalized key is a direct read.
    normalized_key: {
      type: 'string',
      get: (r) => r.normalized_key,
      index: async (values, env) => ({ ids: (values as string[]).map((v) => connectorRequestUuid(env.ctx.tenantId, v)) }),
    },
    connection_type: { type: 'string', get: (r) => r.connection_type },
    connector_display_name: { type: 'string', get: (r) => r.connector_display_name },
    request_source: { type: 'string', get: (r) => r.request_source },
    requested_by_uuids: { type: 'string', get: (r) => r.requested_by_uuids },
    request_count: { type: 'number', get: (r) => r.request_count },
    created_at: { type: 'timestamp', get: (r) => r.created_at },
    updated_at: { type: 'timestamp', get: (r) => r.updated_at },
  },
};

export function listConnectorRequests(ctx: DomainCtx, pairs: Array<[string, string]>) {
  requireAdmin(ctx.caller, 'Only admins can list connector requests');
  return runList(connectorRequestListResource, { ctx, loader: ctx.loader, pairs });
}
