import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { awsFaithfulLayer } from '../../scripts/lib/aws-faithful.ts';
import type { Caller } from '#shared/auth/caller.ts';
import { config } from '#shared/config.ts';
import { createDynamoClient, instrument } from '#shared/db/client.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { fanOut } from '#shared/domain/webhooks/deliveries.ts';
import type { DeliveryMessage } from '#shared/domain/webhooks/entity.ts';
import type { IdentifiedEvent } from '#shared/domain/webhooks/events.ts';
import { createWebhook, deleteWebhook } from '#shared/domain/webhooks/service.ts';
import type { UserRecord } from '#shared/domain/users/entity.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import type { QueueSender } from '#shared/queue/queue.ts';

// a receiver on the local stack's loopback (the fan-out only queues; nothing is posted here)
process.env.WEBHOOK_ALLOW_LOCAL_HTTP = 'true';

/**
 * The fan-out against DynamoDB Local behind the AWS-faithful layer's stale reads: an endpoint's list (GSI1) answers
 * as of 1 s ago, as AWS's index may, so a change committed right after an endpoint's create is fanned out while the
 * list does not name it yet.
 */
function staleAdminCtx(): DomainCtx {
  const client = createDynamoClient();
  awsFaithfulLayer({ staleMs: 1_000, faultRate: 0, endpoint: config.dynamoEndpoint! })(client);
  const tenantId = randomUUID();
  const userId = randomUUID();
  const caller: Caller = { tenantId, userId, role: 'admin', user: { uuid: userId, role: 'admin', status: 'active' } as UserRecord };
  const ctx = { tenantId, db: instrument(client), caller, requestId: randomUUID(), teams: async () => new Set<string>() } as DomainCtx;
  const quiet = () => {};
  return Object.assign(ctx, { loader: new Loader(ctx), log: { debug: quiet, info: quiet, warn: quiet, error: quiet } });
}

const event = (): IdentifiedEvent => ({
  id: `evt_${randomUUID().replaceAll('-', '')}`,
  event: { type: 'goal.created', timestamp: new Date().toISOString(), data: { tenant_uuid: 't', record: { uuid: randomUUID() } } },
});

function recordingQueue() {
  const sent: DeliveryMessage[] = [];
  const queue: QueueSender = {
    send: async (_name, body) => {
      sent.push(body as DeliveryMessage);
      return randomUUID();
    },
  };
  return { queue, sent };
}

describe('the webhook fan-out', () => {
  it("delivers a change committed right after an endpoint's create to it, and none to an endpoint deleted a moment ago", async () => {
    const ctx = staleAdminCtx();
    const { record: w } = await createWebhook(ctx, { url: 'http://127.0.0.1:9/hook', events: ['*'] });
    const { queue, sent } = recordingQueue();
    expect(await fanOut(ctx, [event()], queue)).toBe(1);
    expect(sent.map((m) => m.webhook_uuid)).toEqual([w.uuid]);
    // deleted: its list may still name it for a second, its record is gone
    await deleteWebhook(ctx, w.uuid);
    expect(await fanOut(ctx, [event()], queue)).toBe(0);
    expect(sent).toHaveLength(1);
  });
});
