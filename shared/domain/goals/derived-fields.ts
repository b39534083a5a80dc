/**
 * The field lists of the goal's derived values, each declared once (they had drifted apart as three copies: the
 * check-in's goal write, the rollups projection, the outbound goal.updated event). Who decides each value, who
 * writes it and when it reads back: docs/architecture.md, "Derived values: one owner each".
 */

/** Current values: the goal fields that follow its latest check-in (checkins/decide.ts `goalFollowing`). */
export const FOLLOWED_FIELDS = [
  'current_value',
  'current_progress',
  'current_status',
  'score',
  'last_checkin_date',
  'value_updated_at',
  'value_updated_by_uuid',
  'status_updated_at',
  'status_updated_by_uuid',
] as const;

/**
 * Rollups: the goal fields a parent's rollup is computed from (progress.ts `contributionTo`, `aggregateProgress`),
 * and its own aggregate (a write that changed it outside a rollup write is checked).
 */
export const ROLLUP_INPUTS = [
  'current_progress',
  'parent_links',
  'progress_mode',
  'discarded_at',
  'archived_at',
  'metric',
  'rollup',
] as const;

/** True when any of `fields` differs between two versions of a goal (compared as JSON: links and metrics are objects). */
export const anyMoved = <K extends string>(fields: readonly K[], before: Partial<Record<K, unknown>>, after: Partial<Record<K, unknown>>) =>
  fields.some((k) => JSON.stringify(before[k] ?? null) !== JSON.stringify(after[k] ?? null));
