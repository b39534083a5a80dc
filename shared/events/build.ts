import type { DomainCtx } from '#shared/domain/context.ts';
import type { CheckinRecord } from '#shared/domain/checkins/entity.ts';
import { FOLLOWED_FIELDS } from '#shared/domain/goals/derived-fields.ts';
import { changedFields, draftEvents, eventId, PROGRESS_FIELDS, type IdentifiedEvent } from '#shared/domain/webhooks/events.ts';
import type { EventType } from '#shared/domain/webhooks/entity.ts';
import type { Loader } from '#shared/list/entity-cache.ts';
import { presentCheckins } from '#shared/presenters/checkins.ts';
import { presentGoalsInFull } from '#shared/presenters/goals.ts';
import { presentAccessRequest } from '#shared/presenters/sharing.ts';
import type { TableChange } from '#shared/table-change.ts';

/*
 * Outbound events with their records as the API returns them (contract section 12). The domain drafts what a
 * change means (shared/domain/webhooks/events.ts, pure); this layer, above it, presents the records with the
 * same presenters as the routes and decides from the presented fields whether an update reported anything.
 */

/**
 * Presented fields a goal.updated does not report: the progress family (its own event) and everything a check-in
 * writes with it (the current values, declared once in goals/derived-fields.ts, and `status`, the presented name of
 * current_status), derived read-outs (pace moves with the clock) and the write time.
 */
const NOT_AN_UPDATE = new Set<string>([...PROGRESS_FIELDS, ...FOLLOWED_FIELDS, 'status', 'expected_progress', 'pace', 'updated_at']);

const progressKeys = new Set<string>([...PROGRESS_FIELDS, 'status']);

/**
 * The events of a change, with records presented as the API returns them to an admin (full `parent_links`
 * and `path`; labels named). A goal update that changed no reported field (a check-in's bookkeeping) makes
 * no goal.updated; a check-in update that changed nothing presented makes nothing.
 */
export async function buildEvents(change: TableChange, loader: Loader): Promise<IdentifiedEvent[]> {
  const draft = draftEvents(change);
  if (!draft) return [];
  const make = (type: EventType, record: Record<string, unknown>, previous?: Record<string, unknown>): IdentifiedEvent => ({
    id: eventId(change, type),
    event: { type, timestamp: change.at, data: { tenant_uuid: change.tenantId, record, ...(previous ? { previous } : {}) } },
  });
  const s = draft.subject;
  if (s.kind === 'access_request') return [make('access_request.created', presentAccessRequest(s.after))];
  if (s.kind === 'goal') {
    const records = s.before && s.after ? [s.before, s.after] : [(s.after ?? s.before)!];
    const presented = (await presentGoalsInFull(loader, records)) as Array<Record<string, unknown>>;
    const after = presented[presented.length - 1]!;
    if (!s.before) return [make('goal.created', after)];
    const before = presented[0]!;
    const out: IdentifiedEvent[] = [];
    for (const type of draft.types) {
      if (type === 'goal.progress_changed')
        out.push(
          make(
            type,
            after,
            changedFields(before, after, (k) => !progressKeys.has(k)),
          ),
        );
      else {
        const previous = changedFields(before, after, NOT_AN_UPDATE);
        if (type === 'goal.deleted' || Object.keys(previous).length > 0)
          out.push(make(type, after, type === 'goal.deleted' ? undefined : previous));
      }
    }
    return out;
  }
  const records = [s.before, s.after].filter((r): r is CheckinRecord => !!r);
  const presented = (await presentCheckins({ loader } as DomainCtx, records)) as Array<Record<string, unknown>>;
  const type = draft.types[0]!;
  if (type === 'checkin.created' || type === 'checkin.deleted') return [make(type, presented[0]!)];
  const previous = changedFields(presented[0]!, presented[1]!, new Set(['updated_at']));
  return Object.keys(previous).length ? [make(type, presented[1]!, previous)] : [];
}
