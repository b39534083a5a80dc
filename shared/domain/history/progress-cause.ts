// The causes and the marker a goal record carries, apart from history/entity.ts (which imports the goal's
// types): goals/entity.ts imports them from here, so neither entity imports the other.

/** Why a goal's value, progress or status moved (contract 13). */
export const HISTORY_CAUSES = ['checkin', 'checkin_updated', 'checkin_deleted', 'rollup', 'metric_changed'] as const;
export type HistoryCause = (typeof HISTORY_CAUSES)[number];

/**
 * The marker a command leaves on the goal record it writes, naming why value/progress/status moved: the
 * stream cannot tell a new check-in from an edited one by the goal's images alone. `at` is the record's
 * `updated_at` of that write, so a marker left over from an earlier write (a later write that did not set
 * one) is recognised as stale and ignored.
 */
export interface ProgressCause {
  cause: HistoryCause;
  at: string;
}
