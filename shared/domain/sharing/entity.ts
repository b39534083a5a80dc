import { keys } from '#shared/db/keys.ts';
import type { BaseRecord, EntityDef } from '#shared/db/model.ts';
import type { Level, ShareablePath, ShareableType } from '#shared/domain/sharing/types.ts';

// ---------- shareable resources ----------

export interface Grant {
  user_uuid: string;
  level: Level;
  granted_by_uuid: string;
  granted_at: string;
}

export interface ShareableRecord extends BaseRecord {
  type: ShareableType;
  title: string;
  content: string | null;
  owner_uuid: string;
  grants: Grant[];
}

/**
 * One entity family for the four shareable types; each type is its own list (`T#t#document`, ...), as goal
 * kinds are, so `GET /documents` pages one partition. The envelope marks every shareable `limited` with its
 * owner and grantees as principals, so a list can skip what the caller may not see without reading items.
 */
export const shareableEntity: EntityDef<ShareableRecord> = {
  type: 'shareable',
  listName: (s) => s.type,
  envelope: (s) => ({ vis: 'limited', acl: [`u:${s.owner_uuid}`, ...s.grants.map((g) => `u:${g.user_uuid}`)] }),
};

/**
 * Notifications are written in the same transaction as the access request (TransactWriteItems: at most
 * 100 items), so the number of recipients (owner + managers) is bounded by bounding `manage` grants.
 */
export const MAX_MANAGERS = 50;
/** One item holds the record (400 KB per item): bound the grant list and the content. */
export const MAX_GRANTS = 500;
export const MAX_CONTENT_LENGTH = 50_000;

// ---------- access requests ----------

export type AccessRequestStatus = 'pending' | 'resolved';

export interface AccessRequestRecord {
  uuid: string;
  shareable_type: ShareablePath;
  shareable_uuid: string;
  requester_uuid: string;
  requested_level: Level;
  message: string | null;
  status: AccessRequestStatus;
  created_at: string;
  updated_at: string;
  /** When the last notification e-mail was queued (creation included): the resend window counts from it. */
  last_email_sent_at: string;
  resolved_at: string | null;
  resolved_by_uuid: string | null;
  /**
   * What the notices of the latest created/resent event were made of, written with the request so the change
   * stream derives exactly those notices and their e-mail (shared/stream/projections/access-request-notices.ts). Not presented.
   */
  notice?: RequestNotice;
}

/** The notices of one access request event: who is told, and the names as they read at the event. */
export interface RequestNotice {
  kind: NotificationKind;
  /** When the event happened (the request's last_email_sent_at it set): names the event. */
  at: string;
  recipients: string[];
  actor_display_name: string;
  shareable_title: string;
}

/**
 * One item per (resource, requester), at a deterministic key: creating, upgrading and resolving are
 * conditional writes on that one item, so two concurrent requests cannot leave two pending requests and a
 * resend's throttle is a single conditional update. A resolved request is replaced by the next new one.
 * The record's fields are top-level attributes (not under `rec`) so conditions can name them.
 */
export const accessRequestKey = (tenantId: string, type: ShareableType, resourceUuid: string, requesterUuid: string) =>
  keys.misc(tenantId, 'access_request', `${type}:${resourceUuid}:${requesterUuid}`);

// ---------- in-app notifications ----------

export const NOTIFICATION_KINDS = ['access_request.created', 'access_request.resent'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export interface NotificationRecord extends BaseRecord {
  kind: NotificationKind;
  recipient_uuid: string;
  actor_uuid: string;
  actor_display_name: string;
  subject_type: 'access_request';
  subject_uuid: string;
  shareable_type: ShareablePath;
  shareable_uuid: string;
  shareable_title: string;
  requested_level: Level;
  message: string | null;
  /** Set by the e-mail worker once this notification's e-mail went out (its idempotency marker). */
  email_sent_at: string | null;
}

/**
 * Each recipient's notifications are their own list (`T#t#inbox#<user>`), so "my notifications, newest
 * first" is one descending GSI1 Query, and no tenant-wide partition takes a write per notification.
 */
export const inboxList = (userUuid: string) => `inbox#${userUuid}`;

export const notificationEntity: EntityDef<NotificationRecord> = {
  type: 'notification',
  listName: (n) => inboxList(n.recipient_uuid),
};
