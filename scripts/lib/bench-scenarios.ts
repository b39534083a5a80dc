import { BUDGETS, rowOf, worstOf, type Budget, type Row } from './bench-budgets.ts';
import { call, must, recordsOf, type Measured } from './bench-http.ts';
import { deliveryRow } from './bench-deliveries.ts';
import { syncRows } from './bench-sync.ts';
import { SETTLE_MS } from '#shared/read-models/page-anchors.ts';

/** What the scenarios name in a seeded tenant (over the API or straight into the table). */
export interface SeedRefs {
  users: string[];
  teams: string[];
  labels: string[];
  labelNames: string[];
  periods: string[];
  objectives: string[];
  keyResults: string[];
  /** Rollup trees O ← K ← n leaves (O and K in rollup mode), by n. */
  rollupTrees: Map<number, { O: string; K: string; leaves: string[] }>;
}

interface Scenario {
  name: string;
  method: string;
  /** The path, or how to find it (a cursor page: its cursor read from page 1 first, unmeasured). */
  path: string | ((url: string, token: string) => Promise<string>);
  body?: unknown | (() => unknown);
  budget: Budget;
  /** Sent as a member (not an admin): the caller's teams are read, and the goals it may see judged. */
  asMember?: boolean;
}

/** Who the scenarios call as, and how to give the stack's rate limiter a container's fresh start. */
export interface BenchCallers {
  admin: string;
  /** A member's token, owner of `objectives[0]`. */
  member: string;
  /** Drops the limiter's leases and cached limits (RateLimiter.reset): the next request pays what a fresh container does. */
  resetLimiter: () => void;
}

/** A list's second page by cursor (contract 18): the cursor of `list`'s page 1, read once, unmeasured. */
const cursorPage = (list: string) => async (url: string, token: string) => {
  const cursor = (await must(url, token, 'GET', list)).body?.data?.pagy?.next_cursor;
  if (typeof cursor !== 'string') throw new Error(`${list}: no next_cursor on page 1`);
  return `${list}${list.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(cursor)}`;
};

function scenarios(s: SeedRefs): Scenario[] {
  let created = 0;
  return [
    { name: 'get objective by uuid', method: 'GET', path: `/rest/v2/objectives/${s.objectives[0]}`, budget: BUDGETS.get },
    { name: 'get key result by uuid', method: 'GET', path: `/rest/v2/key_results/${s.keyResults[0]}`, budget: BUDGETS.get },
    {
      name: 'get objective by uuid, as a member',
      method: 'GET',
      path: `/rest/v2/objectives/${s.objectives[0]}`,
      budget: BUDGETS.memberGet,
      asMember: true,
    },
    { name: 'list objectives, page 1 (20)', method: 'GET', path: '/rest/v2/objectives', budget: BUDGETS.page1 },
    {
      name: 'list objectives, page 1 (20), as a member',
      method: 'GET',
      path: '/rest/v2/objectives',
      budget: BUDGETS.memberPage1,
      asMember: true,
    },
    { name: 'list initiatives, page 50 (20)', method: 'GET', path: '/rest/v2/initiatives?page=50', budget: BUDGETS.page50 },
    {
      name: 'list initiatives, page 50 newest first (20)',
      method: 'GET',
      path: '/rest/v2/initiatives?page=50&q[s]=created_at%20desc',
      budget: BUDGETS.page50,
    },
    {
      name: 'list key results, owner filter',
      method: 'GET',
      path: `/rest/v2/key_results?q[owners_uuid_eq]=${s.users[3]}`,
      budget: BUDGETS.indexedFilter,
    },
    {
      name: 'list initiatives, label filter',
      method: 'GET',
      path: `/rest/v2/initiatives?q[labels_uuid_eq]=${s.labels[5]}`,
      budget: BUDGETS.indexedFilter,
    },
    {
      name: 'list initiatives, label name filter',
      method: 'GET',
      path: `/rest/v2/initiatives?q[labels_name_eq]=${s.labelNames[5]}`,
      budget: BUDGETS.indexedFilter,
    },
    {
      name: 'list initiatives, team filter',
      method: 'GET',
      path: `/rest/v2/initiatives?q[teams_uuid_eq]=${s.teams[2]}`,
      budget: BUDGETS.indexedFilter,
    },
    {
      name: 'list key results, time period filter',
      method: 'GET',
      path: `/rest/v2/key_results?q[time_period_uuid_eq]=${s.periods[1]}`,
      budget: BUDGETS.indexedFilter,
    },
    {
      name: 'list key results, status on_track',
      method: 'GET',
      path: '/rest/v2/key_results?q[current_status_eq]=on_track',
      budget: BUDGETS.indexedFilter,
    },
    {
      name: 'list key results, status in a period',
      method: 'GET',
      path: `/rest/v2/key_results?q[current_status_eq]=on_track&q[time_period_uuid_eq]=${s.periods[0]}`,
      budget: BUDGETS.indexedFilter,
    },
    {
      name: 'list key results, last check-in desc',
      method: 'GET',
      path: '/rest/v2/key_results?q[s]=last_checkin_date%20desc',
      budget: BUDGETS.page1,
    },
    {
      name: 'list key results, parent filter',
      method: 'GET',
      path: `/rest/v2/key_results?q[links_as_child_ancestor_uuid_eq]=${s.objectives[1]}`,
      budget: BUDGETS.indexedFilter,
    },
    {
      name: 'list initiatives, ancestor filter (3-level subtree)',
      method: 'GET',
      path: `/rest/v2/initiatives?q[ancestors_uuid_eq]=${s.objectives[2]}`,
      budget: BUDGETS.ancestor,
    },
    { name: 'list key results, count=true', method: 'GET', path: '/rest/v2/key_results?count=true&per_page=1', budget: BUDGETS.count },
    {
      name: 'list key results, count=true, period filter',
      method: 'GET',
      path: `/rest/v2/key_results?count=true&per_page=1&q[time_period_uuid_eq]=${s.periods[2]}`,
      budget: BUDGETS.count,
    },
    {
      name: 'create objective',
      method: 'POST',
      path: '/rest/v2/objectives',
      body: () => ({
        title: `Bench created ${created++}`,
        time_period_uuid: s.periods[0],
        owner_uuids: [s.users[0]],
        team_uuids: [s.teams[0]],
        labels: [s.labelNames[0]],
      }),
      budget: BUDGETS.create,
    },
    {
      name: 'update objective title',
      method: 'PUT',
      path: `/rest/v2/objectives/${s.objectives[0]}`,
      body: () => ({ title: `Renamed ${created++}` }),
      budget: BUDGETS.update,
    },
    {
      name: 'create check-in (no rollup)',
      method: 'POST',
      path: '/rest/v2/checkins',
      body: () => ({ goal_uuid: s.keyResults[0], value: created++ % 100 }),
      budget: BUDGETS.checkin,
    },
    { name: 'list check-ins, page 1', method: 'GET', path: '/rest/v2/checkins', budget: BUDGETS.checkinPage1 },
    { name: 'list users, page 1', method: 'GET', path: '/rest/v2/users', budget: BUDGETS.usersPage1 },
    { name: 'event feed, first page (20)', method: 'GET', path: '/events', budget: BUDGETS.eventsPage1 },
    // a cursor page costs at most what page 1 costs (contract 18): each beside its list's page-1 row
    { name: 'list objectives, cursor page', method: 'GET', path: cursorPage('/rest/v2/objectives'), budget: BUDGETS.page1 },
    {
      name: 'list objectives, cursor page, as a member',
      method: 'GET',
      path: cursorPage('/rest/v2/objectives'),
      budget: BUDGETS.memberPage1,
      asMember: true,
    },
    {
      name: 'list initiatives, cursor page newest first',
      method: 'GET',
      path: cursorPage('/rest/v2/initiatives?q[s]=created_at%20desc'),
      budget: BUDGETS.page1,
    },
    {
      name: 'list key results, cursor page, last check-in desc',
      method: 'GET',
      path: cursorPage('/rest/v2/key_results?q[s]=last_checkin_date%20desc'),
      budget: BUDGETS.lastCheckinCursorPage,
    },
    {
      name: 'list key results, cursor page, status on_track',
      method: 'GET',
      path: cursorPage('/rest/v2/key_results?q[current_status_eq]=on_track'),
      budget: BUDGETS.indexedFilter,
    },
    { name: 'list check-ins, cursor page', method: 'GET', path: cursorPage('/rest/v2/checkins'), budget: BUDGETS.checkinPage1 },
    { name: 'list users, cursor page', method: 'GET', path: cursorPage('/rest/v2/users'), budget: BUDGETS.usersPage1 },
  ];
}

/**
 * The steady state the scenarios measure: the change stream caught up (the read models, counters and rollups
 * the lists plan from are derived asynchronously, locally too) and everything seeded up to `seededAt` older than
 * the page anchors' settle time (a deep page trusts the anchors of buckets that old only, docs/architecture.md
 * "Filters"), as a tenant's goals are.
 */
export const steadyState = (streamIdle: () => Promise<void>, seededAt: number) => async () => {
  await streamIdle();
  await new Promise((r) => setTimeout(r, Math.max(0, seededAt + SETTLE_MS - Date.now())));
};

/**
 * Waits for `settled` (the change stream caught up: the read models, rollups and counters the lists plan from are
 * derived asynchronously, locally too), then runs every scenario: one warm-up call (the handler's first load), a
 * try with the limiter as the warm-up left it, and a try after the limiter's reset (no lease, its limits unread:
 * what a request costs when its container holds none). Every try is held to the row's budget, the request's own
 * counts and the limiter's each to their own (bench-budgets.ts `rowOf`), and the row reports the worst (`worstOf`);
 * a list answering no record fails (the seed fills every one). Then three check-ins on leaves of each rollup tree,
 * each once the stream is idle (the previous one's recompute done), the last after the limiter's reset, the worst
 * kept. Check-ins under the largest tree must read no more items than under the smallest. Last, what one
 * data-source sync costs (bench-sync.ts), and how many webhook deliveries a second the stack sustains (bench-deliveries.ts).
 */
export async function runScenarios(url: string, callers: BenchCallers, refs: SeedRefs, settled: () => Promise<void>): Promise<Row[]> {
  const rows: Row[] = [];
  await settled();
  for (const sc of scenarios(refs)) {
    const body = () => (typeof sc.body === 'function' ? (sc.body as () => unknown)() : sc.body);
    const token = sc.asMember ? callers.member : callers.admin;
    const path = typeof sc.path === 'function' ? await sc.path(url, token) : sc.path;
    await call(url, token, sc.method, path, body());
    const steady = await call(url, token, sc.method, path, body());
    callers.resetLimiter();
    const fresh = await call(url, token, sc.method, path, body());
    // the seed fills every list a scenario reads: no record means a wrong measurement (e.g. before the stream converged)
    const extra = [steady, fresh].some((t) => Array.isArray(t.body?.data?.records) && recordsOf(t) === 0) ? ['no record returned'] : [];
    // the reset must show: a fresh container's request reads the limits and leases (else the limiter is off or unmetered)
    if (fresh.status < 300 && fresh.limiter.roundTrips === 0) extra.push('no limiter call after its reset');
    rows.push(rowOf(sc.name, [steady, fresh], sc.budget, extra));
  }
  await settled(); // the rollup recomputes of the mode switches, before the rollup check-ins
  const triesOf = new Map<number, Measured[]>();
  for (const [n, tree] of [...refs.rollupTrees].sort((a, b) => a[0] - b[0])) {
    const tries: Measured[] = [];
    for (const [i, value] of [40, 100, 10].entries()) {
      await settled(); // the previous check-in's recompute done: a try measures a check-in, not a race with it
      if (i === 2) callers.resetLimiter();
      tries.push(await call(url, callers.admin, 'POST', '/rest/v2/checkins', { goal_uuid: tree.leaves[i], value }));
    }
    triesOf.set(n, tries);
  }
  const sizes = [...triesOf.keys()];
  const smallestTries = triesOf.get(Math.min(...sizes));
  const smallest = smallestTries && worstOf(smallestTries);
  for (const [n, tries] of triesOf) {
    const r = worstOf(tries);
    const extra =
      smallest && r.itemsRead > smallest.itemsRead
        ? [`${r.itemsRead} items > ${smallest.itemsRead} under ${Math.min(...sizes)} children`]
        : [];
    rows.push(rowOf(`create check-in, 3-level rollup, parent of ${n} children`, tries, BUDGETS.checkinRollup, extra));
  }
  rows.push(...(await syncRows(url, callers, refs, settled)));
  await settled();
  rows.push(await deliveryRow(url, callers.admin, [...refs.rollupTrees.values()][0]!.leaves, settled));
  return rows;
}

export const failedRows = (rows: Row[]) => rows.filter((r) => r.verdict.startsWith('FAIL'));

export function printRows(rows: Row[]): void {
  for (const r of rows) {
    const cost = `${r.round_trips} rt (${r.calls} calls), ${r.read_units} RCU, ${r.write_units} WCU, ${r.items_read} items read, ${r.records} returned, ${r.writes} writes; limiter ${r.limiter_round_trips} rt (${r.limiter_calls} calls), ${r.limiter_read_units} RCU, ${r.limiter_write_units} WCU, ${r.limiter_writes} writes`;
    const failed = r.verdict.startsWith('FAIL');
    console.log(
      `${failed ? 'FAIL' : r.budget ? ' ok ' : '    '} ${r.scenario.padEnd(52)} ${cost}${r.budget ? `  [budget ${r.budget}; limiter ${r.limiter_budget}]` : ''}${failed ? `  ${r.verdict.slice(6)}` : r.over_target ? `  over target: ${r.over_target}` : r.status >= 300 ? `  status ${r.status}` : ''}`,
    );
  }
}

/** The rows as a markdown table (bench/RESULTS.md, docs/benchmarks.md). */
export function markdownRows(rows: Row[]): string {
  const head =
    '| scenario | records | round trips | calls | read units | write units | items read | limiter rt | limiter calls | limiter RCU | limiter WCU | limiter writes | budget | limiter budget | verdict |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|';
  return [
    head,
    ...rows.map(
      (r) =>
        `| ${r.scenario} | ${r.records} | ${r.round_trips} | ${r.calls} | ${r.read_units} | ${r.write_units} | ${r.items_read} | ${r.limiter_round_trips} | ${r.limiter_calls} | ${r.limiter_read_units} | ${r.limiter_write_units} | ${r.limiter_writes} | ${r.budget} | ${r.limiter_budget} | ${r.verdict} |`,
    ),
  ].join('\n');
}
