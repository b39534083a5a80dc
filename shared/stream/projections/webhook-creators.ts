import { nowIso } from '#shared/clock.ts';
import type { UserRecord } from '#shared/domain/users/entity.ts';
import { losesWebhookRights } from '#shared/domain/webhooks/decide.ts';
import { disableWebhooksOfCreator } from '#shared/domain/webhooks/disable.ts';
import { entityRecord } from '#shared/stream/changes.ts';
import type { Projection } from '#shared/stream/projection.ts';
import type { TableChange } from '#shared/table-change.ts';

/** The user of a change that took away the rights webhooks require (an admin demoted, deactivated or removed), else undefined. */
export function creatorLosingRights(change: TableChange): string | undefined {
  const before = entityRecord<UserRecord>(change, 'user', 'old');
  const after = entityRecord<UserRecord>(change, 'user', 'new');
  return losesWebhookRights(before, after) ? before!.uuid : undefined;
}

/**
 * Webhook creators (contract section 12: webhooks are admins'): an admin who loses the role or is deactivated
 * stops receiving the tenant's events through the endpoints they created. Each of their active endpoints is
 * disabled (`disabled_reason: creator_lost_access`) and the other admins are notified in-app, in one transaction
 * per endpoint. It judges the user as read now, not the change's image, and each write is conditioned on the
 * versions read: a replayed or late change (the user an admin again since) writes nothing. The delivery worker
 * makes the same check before every POST, for events in flight before this runs.
 */
export const webhookCreatorsProjection: Projection = {
  name: 'webhook-creators',
  accepts: (change) => creatorLosingRights(change) !== undefined,
  async apply(change, ctx) {
    const user = creatorLosingRights(change)!;
    const disabled = await disableWebhooksOfCreator(ctx.data, user, nowIso);
    if (disabled) ctx.log.info('webhooks disabled: creator lost access', { change: change.eventId, user_uuid: user, disabled });
  },
};
