/**
 * Sharing presentation, above the domain: shareable resources (documents, dashboards, playbooks), access
 * requests, in-app notifications and the documents list's summary. Each returns its response schema's type,
 * so a field it forgets fails the build.
 */
import type { z } from 'zod';
import type { Caller } from '#shared/auth/caller.ts';
import { shareableAccess } from '#shared/domain/sharing/access.ts';
import type { AccessRequestRecord, NotificationRecord, ShareableRecord } from '#shared/domain/sharing/entity.ts';
import { PATH_BY_SHAREABLE_TYPE } from '#shared/domain/sharing/types.ts';
import type { DocumentSummarySchema } from '#shared/schemas/documents.ts';
import type { AccessRequestRecordSchema, NotificationRecordSchema, ShareableRecordSchema } from '#shared/schemas/sharing.ts';

type Wire<S extends z.ZodType> = z.infer<S>;

export const presentShareable = (s: ShareableRecord): Wire<typeof ShareableRecordSchema> => ({
  uuid: s.uuid,
  type: s.type,
  shareable_type: PATH_BY_SHAREABLE_TYPE[s.type],
  title: s.title,
  content: s.content,
  owner_uuid: s.owner_uuid,
  grants: s.grants.map((g) => ({ user_uuid: g.user_uuid, level: g.level, granted_by_uuid: g.granted_by_uuid, granted_at: g.granted_at })),
  created_at: s.created_at,
  updated_at: s.updated_at,
});

/** The access request as its endpoints and the `access_request.created` event return it. */
export const presentAccessRequest = (r: AccessRequestRecord): Wire<typeof AccessRequestRecordSchema> => ({
  uuid: r.uuid,
  shareable_type: r.shareable_type,
  shareable_uuid: r.shareable_uuid,
  requester_uuid: r.requester_uuid,
  requested_level: r.requested_level,
  message: r.message,
  status: r.status,
  created_at: r.created_at,
  updated_at: r.updated_at,
  last_email_sent_at: r.last_email_sent_at,
  resolved_at: r.resolved_at,
  resolved_by_uuid: r.resolved_by_uuid,
});

export const presentNotification = (n: NotificationRecord): Wire<typeof NotificationRecordSchema> => ({
  uuid: n.uuid,
  kind: n.kind,
  recipient_uuid: n.recipient_uuid,
  actor_uuid: n.actor_uuid,
  actor_display_name: n.actor_display_name,
  subject_type: n.subject_type,
  subject_uuid: n.subject_uuid,
  shareable_type: n.shareable_type,
  shareable_uuid: n.shareable_uuid,
  shareable_title: n.shareable_title,
  requested_level: n.requested_level,
  message: n.message,
  email_sent_at: n.email_sent_at,
  created_at: n.created_at,
  updated_at: n.updated_at,
});

/**
 * A documents-list record: the document without `content` and `grants` (GET /documents/{uuid} has them). A
 * document holds up to 50 000 characters and 500 grants, so a page of 100 full records could exceed Lambda's
 * 6 MB response limit; the summary stays a few hundred bytes. `access_level` is the caller's own level: the
 * list holds documents only, and only those the caller can see (so it holds a level).
 */
export const presentDocumentSummary = (caller: Caller, d: ShareableRecord): Wire<typeof DocumentSummarySchema> => ({
  uuid: d.uuid,
  type: 'document',
  shareable_type: 'documents',
  title: d.title,
  owner_uuid: d.owner_uuid,
  access_level: shareableAccess(caller, d).level!,
  grants_count: d.grants.length,
  created_at: d.created_at,
  updated_at: d.updated_at,
});
