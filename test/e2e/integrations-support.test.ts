import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getEntity } from '#shared/db/reads.ts';
import { tenantDb } from '#shared/db/tenant-scope.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { recordConnectorRequest } from '#shared/domain/integrations/connector-requests.ts';
import { SUPPORT_ISSUE_QUEUE } from '#shared/domain/integrations/support.ts';
import { SupportIssueMessageSchema } from '#shared/schemas/messages/support-issue.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import { logger } from '#shared/logger.ts';
import { installLocalQueues, type LocalQueues } from '#shared/queue/queue.ts';
import { listAll, newTenant, type TenantFixture } from '../support/api.ts';

/**
 * The API half of the support issue: which requests put a message on the queue. The local stack's worker runs
 * in the vitest main process, out of reach; here the domain function runs in this test process against the
 * same DynamoDB Local, with a recording queue installed as the process's sender (as the local stack does).
 */
describe('connector requests → support-issue queue', () => {
  let t: TenantFixture;
  const sent: Array<{ queue: string; body: unknown }> = [];
  let failNext = 0;
  const LOCAL_KEY = Symbol.for('goal-tracking.localQueues'); // where installLocalQueues puts the process's sender
  const previous = (globalThis as Record<symbol, unknown>)[LOCAL_KEY];

  beforeAll(async () => {
    t = await newTenant('Acme Support Test');
    const fake = {
      async send(queue: string, body: unknown) {
        if (failNext > 0) {
          failNext--;
          throw new Error('queue unavailable');
        }
        sent.push({ queue, body });
        return `id-${sent.length}`;
      },
    };
    installLocalQueues(fake as unknown as LocalQueues);
  });

  afterAll(() => {
    (globalThis as Record<symbol, unknown>)[LOCAL_KEY] = previous;
  });

  afterEach(() => {
    sent.length = 0;
    failNext = 0;
  });

  async function ctxOf(userUuid: string): Promise<DomainCtx> {
    const data = { tenantId: t.tenantUuid, db: await tenantDb(t.tenantUuid) };
    const user = (await getEntity(data, userEntity, userUuid))!.record;
    return {
      ...data,
      caller: { tenantId: t.tenantUuid, userId: user.uuid, role: user.role, user },
      loader: new Loader(data),
      log: logger,
      requestId: 'test',
      teams: async () => new Set(),
    };
  }

  it('queues one issue per new requester, attributed to them, and none for a repeat', async () => {
    const viewer = await t.user({ role: 'viewer', display_name: 'Vera', email: 'vera@example.test' });
    const admin = await ctxOf(t.adminUuid);
    const first = await recordConnectorRequest(admin, { connection_type: ' Net  Suite ', request_source: 'catalog' });
    expect(first.created).toBe(true);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.queue).toBe(SUPPORT_ISSUE_QUEUE);
    const msg = SupportIssueMessageSchema.parse(sent[0]!.body);
    expect(msg).toMatchObject({
      idempotency_key: `connector-request:${t.tenantUuid}:${first.record.uuid}:${t.adminUuid}`,
      tenant: { uuid: t.tenantUuid, name: 'Acme Support Test' },
      requester: { uuid: t.adminUuid },
      connector_request: {
        uuid: first.record.uuid,
        connection_type: 'Net Suite',
        normalized_key: 'net suite',
        connector_display_name: 'Net Suite',
        request_source: 'catalog',
        request_count: 1,
      },
    });

    await recordConnectorRequest(admin, { connection_type: 'NET SUITE' });
    expect(sent).toHaveLength(1);

    const second = await recordConnectorRequest(await ctxOf(viewer.uuid), { connection_type: 'net suite', request_source: 'by_name' });
    expect(second).toMatchObject({ created: false, record: { request_count: 2 } });
    expect(sent).toHaveLength(2);
    expect(SupportIssueMessageSchema.parse(sent[1]!.body)).toMatchObject({
      requester: { uuid: viewer.uuid, display_name: 'Vera', email: 'vera@example.test' },
      connector_request: { request_count: 2 },
    });
  });

  it('persists the request when the queue fails, and queues the issue on the client retry (once)', async () => {
    const admin = await ctxOf(t.adminUuid);
    failNext = 1;
    await expect(recordConnectorRequest(admin, { connection_type: 'Greenhouse' })).rejects.toThrow('queue unavailable');
    const stored = await listAll(t.admin, '/connector_requests?q[normalized_key_eq]=greenhouse');
    expect(stored).toHaveLength(1);
    expect(sent).toHaveLength(0);

    const retry = await recordConnectorRequest(admin, { connection_type: 'greenhouse' });
    expect(retry.created).toBe(false);
    expect(sent).toHaveLength(1);
    // the retried issue keeps the time of the original request
    expect(SupportIssueMessageSchema.parse(sent[0]!.body).requested_at).toBe(stored[0].created_at);

    await recordConnectorRequest(admin, { connection_type: 'GREENHOUSE' });
    expect(sent).toHaveLength(1);
  });
});
