/** Goal rules on plain values (no I/O): the parts of a goal command's decision that need nothing read. */
import { sentFields, uniq } from '#shared/domain/fields.ts';
import type { GoalKind, GoalRecord, MetricRecord, VisibleEntity } from '#shared/domain/goals/entity.ts';
import type { TimePeriodRecord } from '#shared/domain/time-periods/entity.ts';
import { MAX_TRANSACTION_ITEMS, TooManyWritesError, ValidationError, type AppError, type ErrorDetail } from '#shared/errors.ts';
import type { GoalCreateCommand, GoalDeleteCommand, GoalUpdateCommand } from '#shared/domain/goals/commands.ts';

/**
 * Per-field caps of a goal body, chosen so that any create or update within all of them at once fits one
 * DynamoDB transaction (100 items): a goal write is never split, and never refused for its size.
 *
 * Items of a create, worst case (O owners, T teams, D delegates, L label names all new, P parents):
 *   goal item 1 + time period entry 1 + time period check 1 + its places in the last-check-in orders 2 (ascending
 *   and descending, each read forwards: shared/read-models/goal-entries.ts)
 *   + O owner entries + D delegate entries
 *   + 2T (team entry, team existence check)
 *   + 3L (label entry, new label item, its name claim)
 *   + 3P (parent entry, child_of entry, parent version check)
 *   (no short_id on create; visible entities live in the index envelope: no items)
 *   = 5 + O + D + 2T + 3L + 3P = 5 + 10 + 3 + 10 + 24 + 12 = 64
 * Items of an update, worst case (every association replaced by new values, a new time period, a new short_id
 * replacing an old one, and a visibility change, which re-writes every index entry):
 *   goal item 1 + period entry deleted and put 2 + period check 1 + short_id claim released and taken 2
 *   + hierarchy guard 1 (any added parent: docs/data-model.md, "Hierarchy guard")
 *   + 2O + 2D (old entries deleted, new put)
 *   + 3T (old entries deleted, new put, new team checked)
 *   + 4L (old entries deleted, new put, new label item and its claim)
 *   + 5P (old parent and child_of entries deleted, new put, new parent checked)
 *   = 7 + 2O + 2D + 3T + 4L + 5P = 7 + 20 + 6 + 15 + 32 + 20 = 100
 * (test/e2e/goals-limits.test.ts computes both from GOAL_LIMITS, asserts them and builds both cases.)
 */
export const GOAL_LIMITS = { owners: 10, teams: 5, delegates: 3, labels: 8, parents: 4, visibleEntities: 100 } as const;

export const MAX_TX_ITEMS = MAX_TRANSACTION_ITEMS;
export const SHORT_ID = /^[A-Za-z0-9_-]{2,30}$/;

export type ParentInput = string | { parent_uuid: string; contribution_percent?: number };

/** The body's parents as links (first mention of a uuid wins); `contribution_percent` undefined = not given. */
export function parentLinksOf(
  parents: readonly ParentInput[] | null | undefined,
): Array<{ parent_uuid: string; contribution_percent?: number }> {
  const links = new Map<string, { parent_uuid: string; contribution_percent?: number }>();
  for (const p of parents ?? []) {
    const link = typeof p === 'string' ? { parent_uuid: p } : p;
    if (!links.has(link.parent_uuid)) links.set(link.parent_uuid, link);
  }
  return [...links.values()];
}

/**
 * The last resort when a write would not fit one transaction. The caps of GOAL_LIMITS make every create and
 * update within them fit (GOAL_LIMITS above), so this answers only a goal stored with more
 * associations than today's caps, or a delete of too many goals at once. `field` names what to send less of.
 */
export const tooMany = (field: string) => new TooManyWritesError(field);

/** Item cost of each association field sent, per element (see the formulas above), largest first: the field a too_many names. */
export const ITEM_WEIGHTS: Array<[keyof GoalUpdateCommand, number]> = [
  ['parents', 5],
  ['labels', 4],
  ['team_uuids', 3],
  ['owner_uuids', 2],
  ['delegate_uuids', 2],
];
export function heaviestField(input: GoalCreateCommand | GoalUpdateCommand): string {
  const sent = input as Record<string, unknown>;
  const weighed = ITEM_WEIGHTS.map(([f, w]) => [f, w * (Array.isArray(sent[f]) ? (sent[f] as unknown[]).length : 0)] as const).sort(
    (a, b) => b[1] - a[1],
  );
  if (weighed[0]![1] > 0) return weighed[0]![0];
  // nothing big sent: a change that re-writes every index entry of a goal stored with more than today's caps
  const keys = Object.keys(sentFields(sent));
  return ['visibility', 'time_period_uuid', 'short_id'].find((f) => keys.includes(f)) ?? keys[0] ?? 'visibility';
}

/** Items the `tx.replace` of the goal will add: the item and only the entries and claims that change. */

export function dateDetails(
  period: TimePeriodRecord,
  start: string,
  end: string,
  sent: { start_date?: string; end_date?: string },
): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const [field, value] of [
    ['start_date', start],
    ['end_date', end],
  ] as const) {
    if (value < period.start_date || value > period.end_date) {
      details.push({
        field,
        code: 'out_of_range',
        message: `${field} ${value} must fall within the time period (${period.start_date} to ${period.end_date})`,
      });
    }
  }
  if (start > end) {
    // name the date(s) the client sent; with neither sent (a period change) both are the period's and cannot be out of order
    const fields = (['start_date', 'end_date'] as const).filter((f) => sent[f] !== undefined);
    for (const field of fields.length ? fields : (['start_date'] as const)) {
      details.push({ field, code: 'order', message: `start_date ${start} must be on or before end_date ${end}` });
    }
  }
  return details;
}

/** Metric rules (contract 6): progress must be computable for the metric type. */
export function metricDetails(m: MetricRecord | null): ErrorDetail[] {
  if (!m) return [];
  if (m.metric_type === 'reach' && m.start_value === m.target_value) {
    return [{ field: 'metric.target_value', code: 'invalid', message: 'A reach metric needs target_value different from start_value' }];
  }
  if (m.metric_type === 'stay_between' && m.start_value > m.target_value) {
    return [
      {
        field: 'metric.target_value',
        code: 'invalid',
        message: 'A stay_between metric needs start_value (lower bound) on or before target_value (upper bound)',
      },
    ];
  }
  return [];
}

/** The earlier variant's `delegate_uuid` and `delegate_uuids` are not both sent: 422 conflict (decide answers it before delegatesOf counts). */
export function delegateConflict(input: { delegate_uuids?: string[] | null; delegate_uuid?: string | null }): AppError | undefined {
  if (input.delegate_uuids !== undefined && input.delegate_uuid !== undefined)
    return ValidationError.field('delegate_uuid', 'conflict', 'Send delegate_uuids or delegate_uuid (earlier variant), not both');
  return undefined;
}

/** The earlier variant's `delegate_uuid` (one delegate or null) or `delegate_uuids` (both sent: delegateConflict). */
export function delegatesOf(input: { delegate_uuids?: string[] | null; delegate_uuid?: string | null }): string[] | undefined {
  if (input.delegate_uuid !== undefined) return input.delegate_uuid ? [input.delegate_uuid] : [];
  return input.delegate_uuids === undefined ? undefined : uniq(input.delegate_uuids);
}

/** One entry per (entity_type, entity_uuid), the last one sent winning; mode defaults to view. */
export function visibleEntitiesOf(
  list: Array<{ entity_type: 'user' | 'team'; entity_uuid: string; mode?: 'view' | 'edit' }> | null | undefined,
): VisibleEntity[] {
  const byKey = new Map<string, VisibleEntity>();
  for (const e of list ?? [])
    byKey.set(`${e.entity_type}:${e.entity_uuid.toLowerCase()}`, {
      entity_type: e.entity_type,
      entity_uuid: e.entity_uuid,
      mode: e.mode ?? 'view',
    });
  return [...byKey.values()];
}

/** Lower-cased title, description and short_id: one field a client can search with `_cont`. */
export const searchableContent = (g: Pick<GoalRecord, 'title' | 'description' | 'short_id'>) =>
  [g.title, g.description, g.short_id]
    .filter((s) => s)
    .join(' ')
    .toLowerCase();

/** Spec rule 4: 2-30 letters, digits, dashes or underscores, stored upper-case (uniqueness is the entity's claim). */
export function normalizeShortId(raw: string | null): { shortId: string | null } | { error: AppError } {
  if (raw === null) return { shortId: null };
  if (!SHORT_ID.test(raw))
    return { error: ValidationError.field('short_id', 'malformed', 'short_id must be 2-30 letters, digits, dashes or underscores') };
  return { shortId: raw.toUpperCase() };
}

// ---------- delete (soft) ----------

export const IMMEDIATE_FLAGS: Record<GoalKind, keyof GoalDeleteCommand> = {
  objective: 'including_immediate_objectives',
  key_result: 'including_immediate_key_results',
  initiative: 'including_immediate_initiatives',
};

/**
 * `path`: the chain of uuids from the root of the goal's first-parent line down to the goal itself, joined
 * with `/` (a root goal's path is its own uuid). Lets a client draw breadcrumbs and filter a subtree with
 * `q[path_start]=<root uuid>` without walking links. Only the first parent counts: with several parents,
 * `parent_links` and the `ancestors_*` filters carry the rest.
 */
export const pathFor = (uuid: string, firstParent: Pick<GoalRecord, 'uuid' | 'path'> | undefined) =>
  firstParent ? `${firstParent.path ?? firstParent.uuid}/${uuid}` : uuid;

/**
 * The `path` `goal` should hold given `parent`, its first parent as read (undefined: a root goal): undefined
 * when that is not its first parent (any more) or when the parent's path already passes through the goal (a
 * first-parent cycle in bad data, which rewriting would only make longer, level after level).
 */
export function pathUnder(
  goal: Pick<GoalRecord, 'uuid' | 'parent_links'>,
  parent: Pick<GoalRecord, 'uuid' | 'path'> | undefined,
): string | undefined {
  if (goal.parent_links[0]?.parent_uuid !== parent?.uuid) return undefined;
  return parent && (parent.path ?? parent.uuid).split('/').includes(goal.uuid) ? undefined : pathFor(goal.uuid, parent);
}
