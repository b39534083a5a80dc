import { keys } from '#shared/db/keys.ts';
import type { GoalStatus } from '#shared/domain/goals/entity.ts';

/** Why a goal's value, progress or status moved (contract 13). */
export const HISTORY_CAUSES = ['checkin', 'checkin_updated', 'checkin_deleted', 'rollup', 'metric_changed'] as const;
export type HistoryCause = (typeof HISTORY_CAUSES)[number];

/** One point of a goal's history, as the API returns it. */
export interface HistoryRecord {
  at: string;
  value: number | null;
  progress: number | null;
  status: GoalStatus;
  cause: HistoryCause;
}

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

/**
 * History items live in the goal's own partition (`T#t#goal#<goal>`), beside the goal item and its
 * entries, one per goal version that moved value, progress or status: SK `H#<version, 12 digits>`. The goal
 * version orders them exactly as the changes were committed (oldest first), and the same change delivered
 * twice by the stream writes the same item again (idempotent).
 */
export const HISTORY_SK_PREFIX = 'H#';
export const historyKey = (tenantId: string, goalUuid: string, version: number) => ({
  PK: keys.entity(tenantId, 'goal', goalUuid).PK,
  SK: `${HISTORY_SK_PREFIX}${String(version).padStart(12, '0')}`,
});
