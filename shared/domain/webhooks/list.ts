import type { DomainCtx } from '#shared/domain/context.ts';
import { webhookEntity, type WebhookRecord } from '#shared/domain/webhooks/entity.ts';
import { requireAdmin } from '#shared/domain/webhooks/service.ts';
import { runList } from '#shared/list/engine.ts';
import { uuidAttr, type ListResource } from '#shared/list/resource.ts';

export const webhookListResource: ListResource<WebhookRecord> = {
  type: 'webhook',
  entity: webhookEntity,
  lists: ['webhook'],
  attributes: {
    uuid: uuidAttr(),
    url: { type: 'string', get: (w) => w.url },
    status: { type: 'string', get: (w) => w.status },
    events: { type: 'string', get: (w) => w.events },
    description: { type: 'string', get: (w) => w.description },
    created_at: { type: 'timestamp', get: (w) => w.created_at },
    updated_at: { type: 'timestamp', get: (w) => w.updated_at },
  },
};

/** The tenant's endpoints (admins), oldest first. */
export function listWebhooks(ctx: DomainCtx, pairs: Array<[string, string]>) {
  requireAdmin(ctx);
  return runList(webhookListResource, { ctx, loader: ctx.loader, pairs });
}
