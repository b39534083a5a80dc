import type { GoalRecord } from '#shared/domain/goals/entity.ts';

/** A key result with no check-in yet, for pure tests of the goal rules and projections: no table, no clock. */
export const goalRecord = (over: Partial<GoalRecord> = {}): GoalRecord =>
  ({
    uuid: 'g1',
    type: 'key_result',
    metric: { uuid: 'm1', name: null, start_value: 0, target_value: 200, unit: null, metric_type: 'reach' },
    current_metric_uuid: 'm1',
    progress_mode: 'manual',
    current_value: null,
    current_progress: null,
    current_status: 'not_started',
    score: null,
    last_checkin_date: null,
    value_updated_at: null,
    value_updated_by_uuid: null,
    status_updated_at: null,
    status_updated_by_uuid: null,
    parent_links: [],
    path: '',
    label_uuids: [],
    discarded_at: null,
    archived_at: null,
    updated_at: '2025-01-01T00:00:00.000Z',
    ...over,
  }) as GoalRecord;
