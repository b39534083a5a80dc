import { must, pool } from './bench-http.ts';

/** A tenant seeded over HTTP (the API's own writes): what the scenarios name. */
export interface ApiSeed {
  goals: number;
  users: string[];
  teams: string[];
  labels: string[];
  periods: string[];
  objectives: string[];
  keyResults: string[];
  initiatives: string[];
  /** Rollup trees O ← K ← n leaves (O and K in rollup mode), by n. */
  rollupTrees: Map<number, { O: string; K: string; leaves: string[] }>;
  seconds: number;
}

const PERIODS = [
  ['2027-01-01', '2027-03-31'],
  ['2027-04-01', '2027-06-30'],
  ['2027-07-01', '2027-09-30'],
  ['2027-10-01', '2027-12-31'],
];

/**
 * `goals` goals: 10 % objectives, 30 % key results under them, 60 % initiatives under those (each with an
 * owner, a team, a label and one of four periods), 30 on_track check-ins, and the rollup trees of `rollupChildren`.
 * `goalLabels: false` seeds the goals without their label (a goal showing labels reads their names after it
 * until the names are kept on the goal item; the label scenarios then return nothing).
 */
export async function seedOverApi(
  url: string,
  tok: string,
  opts: { goals: number; rollupChildren: number[]; concurrency: number; goalLabels?: boolean },
): Promise<ApiSeed> {
  const started = performance.now();
  const c = opts.concurrency;
  const post = async (path: string, body: unknown) => (await must(url, tok, 'POST', path, body)).body.data.record.uuid as string;
  const users = await pool(20, c, (i) => post('/rest/v2/users', { user: { email: `u${i}@example.test` } }));
  const teams = await pool(10, c, (i) => post('/rest/v2/teams', { name: `Team ${i}`, member_uuids: users.slice(i, i + 3) }));
  const labels = await pool(20, c, (i) => post('/rest/v2/labels', { name: `label-${i}` }));
  const periods = await pool(4, c, (i) =>
    post('/rest/v2/time_periods', { name: `Q${i + 1}`, start_date: PERIODS[i]![0], end_date: PERIODS[i]![1] }),
  );
  const nObj = Math.max(1, Math.round(opts.goals / 10));
  const nKr = Math.max(1, Math.round((opts.goals * 3) / 10));
  const nIni = Math.max(0, opts.goals - nObj - nKr);
  const goalBody = (i: number, parents: string[]) => ({
    title: `Goal ${i}`,
    time_period_uuid: periods[i % periods.length],
    owner_uuids: [users[i % users.length]],
    team_uuids: [teams[i % teams.length]],
    ...(opts.goalLabels === false ? {} : { labels: [`label-${i % labels.length}`] }),
    parents,
  });
  const objectives = await pool(nObj, c, (i) => post('/rest/v2/objectives', goalBody(i, [])));
  const keyResults = await pool(nKr, c, (i) =>
    post('/rest/v2/key_results', {
      ...goalBody(i, [objectives[i % nObj]!]),
      metric: { name: 'm', start_value: 0, target_value: 100, unit: '%', metric_type: 'reach' },
    }),
  );
  const initiatives = await pool(nIni, c, (i) => post('/rest/v2/initiatives', goalBody(i, [keyResults[i % nKr]!])));
  await pool(Math.min(30, nKr), c, (i) =>
    must(url, tok, 'POST', '/rest/v2/checkins', { goal_uuid: keyResults[i], value: 50 + i, status: 'on_track' }),
  );
  const rollupTrees = new Map<number, { O: string; K: string; leaves: string[] }>();
  for (const n of opts.rollupChildren) {
    const base = { time_period_uuid: periods[0] };
    const O = await post('/rest/v2/objectives', { ...base, title: `Rollup O${n}` });
    const K = await post('/rest/v2/key_results', { ...base, title: `Rollup K${n}`, parents: [O] });
    // children under a manual parent (no recompute per create), then the modes switched (one recompute each)
    const leaves = await pool(n, c, (i) => post('/rest/v2/initiatives', { ...base, title: `Rollup I${n}.${i}`, parents: [K] }));
    await must(url, tok, 'PUT', `/rest/v2/key_results/${K}`, { progress_mode: 'rollup' });
    await must(url, tok, 'PUT', `/rest/v2/objectives/${O}`, { progress_mode: 'rollup' });
    rollupTrees.set(n, { O, K, leaves });
  }
  return {
    goals: nObj + nKr + nIni,
    users,
    teams,
    labels,
    periods,
    objectives,
    keyResults,
    initiatives,
    rollupTrees,
    seconds: (performance.now() - started) / 1000,
  };
}
