import type { UserRecord } from '#shared/domain/users/entity.ts';
import { losesWebhookRights } from '#shared/domain/webhooks/decide.ts';
import { creatorCheckWrites, readCreatorCheck, type CreatorCheckState } from '#shared/domain/webhooks/disable.ts';
import { tenantWebhooks } from '#shared/domain/webhooks/service.ts';
import { entityRecord } from '#shared/stream/changes.ts';
import type { Projection, Step } from '#shared/stream/projection.ts';
import type { TableChange } from '#shared/table-change.ts';

/** The user of a change that took away the rights webhooks require (an admin demoted, deactivated or removed), else undefined. */
export function creatorLosingRights(change: TableChange): string | undefined {
  const before = entityRecord<UserRecord>(change, 'user', 'old');
  const after = entityRecord<UserRecord>(change, 'user', 'new');
  return losesWebhookRights(before, after) ? before!.uuid : undefined;
}

/** One endpoint's creator check, as a step of its own: disabled (with the admins' notices) if its creator as read now lost the rights. */
export const creatorCheckStep = (webhookUuid: string, creatorUuid: string): Step<CreatorCheckState> => ({
  reads: (data) => readCreatorCheck(data, webhookUuid, creatorUuid),
  project: (seen, now) => {
    const ops = creatorCheckWrites(seen, now);
    return ops ? { transactions: [ops] } : {};
  },
});

/**
 * Webhook creators (contract section 12: webhooks are admins'): an admin who loses the role or is deactivated
 * stops receiving the tenant's events through the endpoints they created. Reads the tenant's endpoints; each
 * active one the user created is a step of its own, one after the other (`creatorCheckStep`): disabled
 * (`disabled_reason: creator_lost_access`) with the other admins notified in-app, in one transaction. It judges
 * the user as read now, not the change's image, and each write is conditioned on the versions read: a replayed
 * or late change (the user an admin again since) writes nothing. The delivery worker makes the same check
 * before every POST, for events in flight before this runs.
 */
export const webhookCreatorsProjection: Projection<string[]> = {
  name: 'webhook-creators',
  accepts: (change) => creatorLosingRights(change) !== undefined,
  async reads(change, data) {
    const user = creatorLosingRights(change)!;
    return (await tenantWebhooks(data)).filter((w) => w.creator_uuid === user && w.status === 'active').map((w) => w.uuid);
  },
  project(change, endpoints) {
    const user = creatorLosingRights(change)!;
    if (endpoints.length === 0) return {};
    return {
      steps: endpoints.map((uuid) => creatorCheckStep(uuid, user)),
      log: {
        message: 'webhooks disabled: creator lost access',
        fields: { change: change.eventId, user_uuid: user },
        count: 'disabled',
        onlyIfCounted: true,
      },
    };
  },
};
