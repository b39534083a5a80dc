import { expect } from 'vitest';
import { newTenant, type Api, type TenantFixture } from '../support/api.ts';

/** Shared set-up of the goals suites (goals*.test.ts): a tenant with a time period, and quick creators. */
export const KINDS = ['objectives', 'key_results', 'initiatives'] as const;
export type KindPath = (typeof KINDS)[number];
export const P = (kind: KindPath, id?: string, suffix = '') => `/rest/v2/${kind}${id ? `/${id}` : ''}${suffix}`;

export interface GoalTenant {
  t: TenantFixture;
  period: { uuid: string; start_date: string; end_date: string; name: string };
}

export async function createPeriod(api: Api, name: string, start_date: string, end_date: string) {
  const res = await api.post('/rest/v2/time_periods', { name, start_date, end_date });
  if (res.status !== 201) throw new Error(`time period create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.record as GoalTenant['period'];
}

export async function goalTenant(): Promise<GoalTenant> {
  const t = await newTenant();
  const period = await createPeriod(t.admin, 'Q1 2025', '2025-01-01', '2025-03-31');
  return { t, period };
}

/** Creates a goal (201 expected) and returns its record. */
export async function goal(api: Api, kind: KindPath, body: Record<string, unknown>): Promise<any> {
  const res = await api.post(P(kind), body);
  if (res.status !== 201) throw new Error(`goal create failed: ${res.status} ${JSON.stringify(res.body)}`);
  expect(res.body.data.type).toBe(kind.slice(0, -1));
  return res.body.data.record;
}

export const uuids = (records: Array<{ uuid: string }>) => records.map((r) => r.uuid);
export const sorted = (ids: string[]) => [...ids].sort();

/** Every field of the spec's goal record, plus team_uuids, labels, delegate_uuids, created_at, updated_at. */
export const GOAL_FIELDS = [
  'uuid', 'type', 'title', 'description', 'start_date', 'end_date', 'goal_type', 'time_period_uuid', 'current_metric_uuid', 'creator_uuid',
  'last_checkin_date', 'score', 'current_progress', 'current_value', 'current_status', 'status', 'source_uuid', 'source_type', 'path',
  'searchable_content', 'progress_mode', 'value_updated_at', 'status_updated_at', 'value_updated_by_uuid', 'status_updated_by_uuid',
  'visibility', 'ai_rollup_enabled', 'data_sources_count', 'discarded_at', 'discarded_by_uuid', 'short_id_uuid', 'archived_at',
  'archived_by_uuid', 'short_id', 'owner_uuids', 'target', 'unit', 'metric_type', 'parent_links', 'visible_entities', 'checkin_due_days',
  'delegate_uuid', 'delegate_uuids', 'partner_goals_external_id', 'team_uuids', 'labels', 'created_at', 'updated_at',
].sort();
