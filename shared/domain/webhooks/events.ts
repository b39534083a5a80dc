import { createHash } from 'node:crypto';
import type { CheckinRecord } from '#shared/domain/checkins/entity.ts';
import type { GoalRecord } from '#shared/domain/goals/entity.ts';
import { namedAsAfter } from '#shared/domain/labels/decide.ts';
import type { AccessRequestRecord } from '#shared/domain/sharing/entity.ts';
import type { EventType } from '#shared/domain/webhooks/entity.ts';
import type { TableChange } from '#shared/table-change.ts';

/** An outbound event exactly as contract section 12 shapes it (the webhook body, the EventBridge detail). */
export interface OutboundEvent {
  type: EventType;
  timestamp: string;
  data: { tenant_uuid: string; record: Record<string, unknown>; previous?: Record<string, unknown> };
}

/** An event with its id (the `webhook-id`): derived from the change, so a replayed stream record makes the same event. */
export interface IdentifiedEvent {
  id: string;
  event: OutboundEvent;
}

type Subject =
  | { kind: 'goal'; before?: GoalRecord; after?: GoalRecord }
  | { kind: 'checkin'; before?: CheckinRecord; after?: CheckinRecord }
  | { kind: 'access_request'; after: AccessRequestRecord };

/**
 * What a change means, before records are presented: the event types it makes and the records they need.
 * Presenting them (the record as the API returns it) happens above the domain, in shared/events/build.ts.
 */
export interface EventDraft {
  types: EventType[];
  subject: Subject;
}

const ITEM_ONLY = new Set(['PK', 'SK', 'GSI1PK', 'GSI1SK', 'kind', 'id', 'v', 'vis', 'acl', 'state', 'expires_at']);
const entityRecord = <R>(image: Record<string, unknown> | undefined) => (image?.rec as R | undefined) ?? undefined;
const sideRecord = <R>(image: Record<string, unknown>) => Object.fromEntries(Object.entries(image).filter(([k]) => !ITEM_ONLY.has(k))) as R;

const isEntityItem = (change: TableChange, type: string) =>
  change.keys.SK === '#' && change.keys.PK.startsWith(`T#${change.tenantId}#${type}#`);
const isAccessRequest = (change: TableChange) =>
  change.keys.SK === '#' && change.keys.PK.startsWith(`T#${change.tenantId}#access_request#`);

/** Cheap: whether a change can make an event at all (the projection's `accepts`). */
export function mayMakeEvents(change: TableChange): boolean {
  return isEntityItem(change, 'goal') || isEntityItem(change, 'checkin') || isAccessRequest(change);
}

/** Fields that move with check-ins and rollups: their change is `goal.progress_changed`, never `goal.updated`. */
export const PROGRESS_FIELDS = ['current_progress', 'current_value', 'current_status'] as const;
const progressMoved = (a: GoalRecord, b: GoalRecord) => PROGRESS_FIELDS.some((f) => a[f] !== b[f]);

/** The event types of one committed change (pure). */
export function draftEvents(change: TableChange): EventDraft | undefined {
  if (isEntityItem(change, 'goal')) {
    const before = entityRecord<GoalRecord>(change.oldImage);
    const after = entityRecord<GoalRecord>(change.newImage);
    if (change.eventName === 'INSERT' && after) return { types: ['goal.created'], subject: { kind: 'goal', after } };
    if (change.eventName !== 'MODIFY' || !before || !after) return undefined; // goals are soft-deleted: a REMOVE is no API change
    const types: EventType[] = [];
    if (!before.discarded_at && after.discarded_at) types.push('goal.deleted');
    else types.push('goal.updated'); // kept only if a reported field changed (decided once presented)
    if (progressMoved(before, after)) types.push('goal.progress_changed');
    // a label renamed or deleted is no change of the goal: the stream bringing the names it keeps up to date reports nothing
    return { types, subject: { kind: 'goal', before: namedAsAfter(before, after), after } };
  }
  if (isEntityItem(change, 'checkin')) {
    const before = entityRecord<CheckinRecord>(change.oldImage);
    const after = entityRecord<CheckinRecord>(change.newImage);
    if (change.eventName === 'INSERT' && after) return { types: ['checkin.created'], subject: { kind: 'checkin', after } };
    if (change.eventName === 'MODIFY' && before && after)
      return { types: ['checkin.updated'], subject: { kind: 'checkin', before: namedAsAfter(before, after), after } };
    if (change.eventName === 'REMOVE' && before) return { types: ['checkin.deleted'], subject: { kind: 'checkin', before } };
    return undefined;
  }
  if (isAccessRequest(change) && change.newImage) {
    // One item per (resource, requester): a new request is an insert, or a resolved one replaced under a new uuid.
    const isNew = change.eventName === 'INSERT' || change.oldImage?.id !== change.newImage.id;
    if (isNew && change.newImage.status === 'pending')
      return {
        types: ['access_request.created'],
        subject: { kind: 'access_request', after: sideRecord<AccessRequestRecord>(change.newImage) },
      };
  }
  return undefined;
}

/** `evt_` + 32 hex digits of a hash of the item key, its version and the event type. */
export function eventId(change: TableChange, type: EventType): string {
  const image = change.newImage ?? change.oldImage ?? {};
  const version = change.eventName === 'REMOVE' ? `removed@${String(change.oldImage?.v ?? '')}` : String(image.v ?? '');
  return `evt_${createHash('sha256').update(`${change.keys.PK}\n${change.keys.SK}\n${version}\n${type}`).digest('hex').slice(0, 32)}`;
}

/** The old values of the fields that differ between two presented records (JSON equality), minus `ignore`. */
export function changedFields(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  ignore: Set<string> | ((k: string) => boolean),
): Record<string, unknown> {
  const skip = typeof ignore === 'function' ? ignore : (k: string) => ignore.has(k);
  const out: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (skip(key)) continue;
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) out[key] = before[key] ?? null;
  }
  return out;
}
