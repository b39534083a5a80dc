import * as z from 'zod';
import { NOTIFICATION_KINDS } from '#shared/domain/sharing/entity.ts';
import { SHAREABLE_PATHS, SHAREABLE_TYPES } from '#shared/domain/sharing/types.ts';
import { level } from '#shared/schemas/bodies/sharing-fields.ts';
import { listEnvelope, recordEnvelope } from '#shared/schemas/common.ts';

const shareablePath = z.enum(SHAREABLE_PATHS as [string, ...string[]]);

// ---------- shareable resources (extension, contract section 8) ----------

/** The sharing bodies are built in shared/schemas/bodies/ (a handler loads its own on first use); re-exported for the route table. */
export { ShareableCreateBody } from '#shared/schemas/bodies/shareable-create.ts';
export { GrantBody } from '#shared/schemas/bodies/grant.ts';
export { AccessRequestBody } from '#shared/schemas/bodies/access-request.ts';

const GrantSchema = z.object({ user_uuid: z.string(), level, granted_by_uuid: z.string(), granted_at: z.string() });

export const ShareableRecordSchema = z
  .object({
    uuid: z.string(),
    type: z.enum(SHAREABLE_TYPES as [string, ...string[]]),
    shareable_type: shareablePath,
    title: z.string(),
    content: z.string().nullable(),
    owner_uuid: z.string(),
    grants: z.array(GrantSchema),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Shareable' });

/** `type` is the singular name of the path (`documents` → `document`, `okrs-dashboards` → `okrs_dashboard`). */
export const shareableResponse = (type: string) => recordEnvelope(type, ShareableRecordSchema);

// ---------- access requests (spec: application endpoints) ----------

export const ResendBody = z
  .strictObject({})
  .meta({ id: 'AccessRequestResendBody', description: "No fields: the request is the caller's own pending one." });

export const AccessRequestRecordSchema = z
  .object({
    uuid: z.string(),
    shareable_type: shareablePath,
    shareable_uuid: z.string().meta({ description: 'The resource uuid (without tenant prefix)' }),
    requester_uuid: z.string(),
    requested_level: level,
    message: z.string().nullable(),
    status: z.enum(['pending', 'resolved']),
    created_at: z.string(),
    updated_at: z.string(),
    last_email_sent_at: z.string().meta({
      description: 'When the last notification e-mail was queued (the one at creation included); resend is allowed an hour later',
    }),
    resolved_at: z.string().nullable(),
    resolved_by_uuid: z.string().nullable(),
  })
  .meta({ id: 'AccessRequest' });

export const AccessRequestResponse = z
  .object({
    data: z.object({
      type: z.literal('access_request'),
      record: AccessRequestRecordSchema.nullable().meta({
        description: "The caller's pending request after the call; null when already_satisfied and none is pending",
      }),
      outcome: z.enum(['created', 'upgraded', 'updated', 'unchanged', 'already_satisfied']).meta({
        description:
          'created: a new pending request (owner and managers notified in-app and by e-mail); upgraded: the pending request now asks for the higher level (message replaced if given), no notice; updated: only the message changed; unchanged: nothing to change; already_satisfied: the caller is owner or already holds the level (no-op)',
      }),
    }),
  })
  .meta({ id: 'AccessRequestResponse' });

export const MyAccessRequestResponse = z
  .object({
    data: z.object({
      type: z.literal('access_request'),
      record: AccessRequestRecordSchema.nullable().meta({ description: "The caller's pending request, or null" }),
    }),
  })
  .meta({ id: 'MyAccessRequestResponse' });

export const ResendResponse = z
  .object({
    status: z.enum(['resent', 'throttled', 'no_pending_request']),
    next_resend_at: z
      .string()
      .nullable()
      .meta({ description: 'Earliest time of the next resend (after resent or throttled); null with no_pending_request' }),
  })
  .meta({ id: 'AccessRequestResendResponse' });

// ---------- notifications (extension) ----------

export const NotificationRecordSchema = z
  .object({
    uuid: z.string(),
    // `webhook.disabled` (shared/domain/webhooks/disable.ts): subject is the webhook, no actor and no shareable;
    // `data_source.failing` (shared/domain/integrations/sync-notices.ts): subject is the data source, likewise.
    kind: z.enum([...NOTIFICATION_KINDS, 'webhook.disabled', 'data_source.failing']),
    recipient_uuid: z.string(),
    actor_uuid: z.string().nullable(),
    actor_display_name: z.string(),
    subject_type: z.enum(['access_request', 'webhook', 'data_source']),
    subject_uuid: z.string(),
    shareable_type: shareablePath.nullable(),
    shareable_uuid: z.string().nullable(),
    shareable_title: z.string().nullable(),
    requested_level: level.nullable(),
    message: z.string().nullable(),
    email_sent_at: z.string().nullable().meta({ description: 'Set once the e-mail of this notification went out' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Notification' });

export const NotificationListResponse = listEnvelope('notification', NotificationRecordSchema);
