import type { GoalRecord } from '#shared/domain/goals/entity.ts';
import type { HistoryRecord } from '#shared/domain/history/entity.ts';
import type { HistoryCause, ProgressCause } from '#shared/domain/history/progress-cause.ts';

/**
 * The history point a change of a goal item means, or undefined when value, progress and status did not
 * move (a title edit, a check-in behind the latest, a rewrite that only bumped the version). Pure: derived
 * from the stream's old and new images of the goal item.
 *
 * The cause is the marker the writing command left (`progress_cause`, valid only for the write that set
 * it: its `at` equals the record's `updated_at`). Without a valid marker it is derived from the images:
 * a changed metric or a goal leaving rollup mode is `metric_changed`; progress alone moving on a rollup
 * goal is `rollup`; the value following an older check-in (or none) is `checkin_deleted`; any other move
 * of the check-in driven fields is `checkin`. A status set directly by a goal update, with no check-in, is
 * none of the contract's causes and is not a history point.
 */
export function historyPoint(
  oldRec: GoalRecord | undefined,
  newRec: GoalRecord | undefined,
  fallbackAt: string,
): HistoryRecord | undefined {
  if (!oldRec || !newRec) return undefined; // creation starts empty (no value yet); goals are never hard-deleted except by a failed import
  const moved =
    oldRec.current_value !== newRec.current_value ||
    oldRec.current_progress !== newRec.current_progress ||
    oldRec.current_status !== newRec.current_status;
  if (!moved) return undefined;
  const cause = markedCause(newRec) ?? derivedCause(oldRec, newRec);
  if (!cause) return undefined;
  return {
    at: newRec.updated_at ?? fallbackAt,
    value: newRec.current_value,
    progress: newRec.current_progress,
    status: newRec.current_status,
    cause,
  };
}

function markedCause(rec: GoalRecord): HistoryCause | undefined {
  const marker = (rec as GoalRecord & { progress_cause?: ProgressCause | null }).progress_cause;
  return marker && marker.at === rec.updated_at ? marker.cause : undefined;
}

function derivedCause(o: GoalRecord, n: GoalRecord): HistoryCause | undefined {
  if (JSON.stringify(o.metric) !== JSON.stringify(n.metric)) return 'metric_changed';
  if (o.progress_mode === 'rollup' && n.progress_mode !== 'rollup') return 'metric_changed';
  const checkinFieldsMoved =
    o.value_updated_at !== n.value_updated_at || o.last_checkin_date !== n.last_checkin_date || o.current_value !== n.current_value;
  if (!checkinFieldsMoved) {
    if (n.progress_mode === 'rollup' && o.current_progress !== n.current_progress) return 'rollup';
    return undefined; // a status set by a goal update
  }
  // The goal follows its latest check-in; written with that check-in, value_updated_at is this write's time.
  if (n.value_updated_at === null || (n.value_updated_at ?? '') < (n.updated_at ?? '')) return 'checkin_deleted';
  return 'checkin';
}
