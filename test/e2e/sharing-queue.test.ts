import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getEntity } from '#shared/db/store.ts';
import { tenantDb } from '#shared/db/tenant-scope.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { requestAccess, resendAccessRequest } from '#shared/domain/sharing/requests.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import { logger } from '#shared/logger.ts';
import { installLocalQueues, type LocalQueues } from '#shared/queue/queue.ts';
import { newTenant, type TenantFixture } from '../support/api.ts';

/**
 * When the e-mail of an access request cannot be queued, no e-mail went out: the resend window must not
 * count one. The domain functions run in this test process against the local stack's DynamoDB Local, with a
 * queue that fails installed as the process's sender (the local stack's own queues are out of reach).
 */
describe('access request e-mail that could not be queued', () => {
  let t: TenantFixture;
  let failing = true;
  const LOCAL_KEY = Symbol.for('goal-tracking.localQueues');
  const previous = (globalThis as Record<symbol, unknown>)[LOCAL_KEY];

  beforeAll(async () => {
    t = await newTenant();
    installLocalQueues({
      async send() {
        if (failing) throw new Error('queue unavailable');
        return 'id';
      },
    } as unknown as LocalQueues);
  });
  afterAll(() => {
    (globalThis as Record<symbol, unknown>)[LOCAL_KEY] = previous;
  });

  async function ctxOf(userUuid: string): Promise<DomainCtx> {
    const data = { tenantId: t.tenantUuid, db: await tenantDb(t.tenantUuid) };
    const user = (await getEntity(data, userEntity, userUuid))!.record;
    return { ...data, caller: { tenantId: t.tenantUuid, userId: user.uuid, role: user.role, user }, loader: new Loader(data), log: logger, requestId: 'test', teams: async () => new Set() };
  }

  it('still saves the request, and lets the requester resend at once instead of being throttled for an hour', async () => {
    const doc = await t.admin.post('/documents', { title: 'Plan' });
    expect(doc.status).toBe(201);
    const requester = await t.user();
    const ctx = await ctxOf(requester.uuid);
    const created = await requestAccess(ctx, 'documents', doc.body.data.record.uuid, { requested_level: 'edit' });
    expect(created.outcome).toBe('created');
    const mine = await requester.api.get(`/documents/${doc.body.data.record.uuid}/access_requests/mine`);
    expect(mine.body.data.record).toMatchObject({ status: 'pending', last_email_sent_at: new Date(0).toISOString() });
    failing = false;
    expect((await resendAccessRequest(await ctxOf(requester.uuid), 'documents', doc.body.data.record.uuid)).status).toBe('resent');
    expect((await resendAccessRequest(await ctxOf(requester.uuid), 'documents', doc.body.data.record.uuid)).status).toBe('throttled');
  });
});
