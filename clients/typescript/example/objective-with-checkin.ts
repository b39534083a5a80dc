/**
 * Creates an objective with a metric in the first time period, checks in on it and reads it back.
 *   GOAL_TRACKING_URL=http://127.0.0.1:3000 GOAL_TRACKING_TOKEN=<token> npx tsx clients/typescript/example/objective-with-checkin.ts
 * (locally: `npm start`, then `npm run admin -- create-tenant ...` prints a token).
 */
import { createGoalTrackingClient } from '../src/index.ts';

const baseUrl = process.env.GOAL_TRACKING_URL ?? 'http://127.0.0.1:3000';
const token = process.env.GOAL_TRACKING_TOKEN;
if (!token) throw new Error('Set GOAL_TRACKING_TOKEN to a bearer token of the API');

const api = createGoalTrackingClient({ baseUrl, token });

// Every call is checked against the API's document: paths, parameters, bodies and answers are typed.
const periods = await api.GET('/rest/v2/time_periods', { params: { query: { per_page: '1' } } });
if (!periods.data) throw new Error(`listing time periods: ${periods.response.status} ${periods.error?.error.message ?? ''}`);
const period = periods.data.data.records[0];
if (!period) throw new Error('The tenant has no time period yet: create one with POST /rest/v2/time_periods');

const created = await api.POST('/rest/v2/objectives', {
  body: {
    title: 'Grow weekly active teams',
    time_period_uuid: period.uuid,
    metric: { name: 'Active teams', start_value: 0, target_value: 200, metric_type: 'reach' },
  },
});
if (!created.data) throw new Error(`creating the objective: ${created.response.status} ${created.error?.error.message ?? ''}`);
const objective = created.data.data.record;

const checkin = await api.POST('/rest/v2/checkins', {
  body: { goal_uuid: objective.uuid, value: 50, status: 'on_track', note: 'First month' },
});
if (!checkin.data) throw new Error(`checking in: ${checkin.response.status} ${checkin.error?.error.message ?? ''}`);

const { data } = await api.GET('/rest/v2/objectives/{id}', { params: { path: { id: objective.uuid } } });
console.log(`${data?.data.record.title}: ${data?.data.record.current_progress}% (${data?.data.record.current_status})`);
