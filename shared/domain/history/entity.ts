import { keys } from '#shared/db/keys.ts';
import type { GoalStatus } from '#shared/domain/goals/entity.ts';
import type { HistoryCause } from '#shared/domain/history/progress-cause.ts';

/** One point of a goal's history, as the API returns it. */
export interface HistoryRecord {
  at: string;
  value: number | null;
  progress: number | null;
  status: GoalStatus;
  cause: HistoryCause;
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
