import type { Measured } from './bench-http.ts';
import { recordsOf } from './bench-http.ts';

/**
 * The rate limit the bench runs under: on, as deployed, and high enough to admit everything the bench sends (the
 * user's bucket is half of it). The limiter's calls are then part of what each request costs (docs/benchmarks.md).
 */
export const BENCH_RATE_LIMIT = { TENANT_RATE_LIMIT_RPS: '100000', TENANT_RATE_LIMIT_BURST: '400000' };

/**
 * The rate limiter's own budget for one request: its calls are counted apart from the request's (`x-db-limiter-*`,
 * `limiterDbMetrics` in shared/db/metrics.ts) and held to this, as the request's own are held to the row's budget;
 * neither may spend the other's room.
 */
export interface LimiterBudget {
  roundTrips: number;
  rcu: number;
  /** Lease writes (UpdateItem). */
  writes: number;
}

/**
 * The limiter's documented worst case for a request whose container holds no lease and has not read the tenant's
 * limits for 10 s (docs/benchmarks.md): the limits read (0.5 RCU, an eventually consistent GetItem of a small
 * item; DynamoDB Local counts a read that finds nothing as a write unit, shared/db/metrics.ts), then the user's
 * lease, then the tenant's, each one conditional UpdateItem, or two when its shard is not as the container assumed
 * (shared/db/rate-limit-store.ts `leaseTokens`): 5 round trips, 4 writes. A container holding both leases pays
 * nothing. Only a race with another container's lease of the same shard takes more (`leaseTokens` tries up to 4
 * times), which the bench, one request at a time, never makes.
 */
export const LIMITER_COLD: LimiterBudget = { roundTrips: 5, rcu: 0.5, writes: 4 };

/**
 * Webhook deliveries a second the local stack must sustain, per event a second a chaos-like load of check-ins
 * produces on the same machine in the same run (the bench's delivery row, scripts/lib/bench-deliveries.ts; issue 37).
 */
export const DELIVERIES_PER_EVENT = 3;

/** A worker's run: it has no rate limiter, so the limiter may cost nothing. */
export const NO_LIMITER: LimiterBudget = { roundTrips: 0, rcu: 0, writes: 0 };

/**
 * The data-access budgets (issue 9 section 2, issue 20); each scenario names the ones it is held to. Round trips,
 * RCU, items read and writes are the request's own, held without any allowance; the limiter's calls are held to
 * `limiter`, which every row states.
 */
export interface Budget {
  roundTrips?: number;
  rcu?: number;
  /** Items read at most `perReturned` x records returned + `plus`. */
  itemsRead?: { perReturned: number; plus: number };
  /** Write calls (one transaction: 1). */
  writes?: number;
  /** The limiter's own budget: LIMITER_COLD for a request, NO_LIMITER for a worker's run. */
  limiter: LimiterBudget;
  /**
   * Where the budget is what the code costs today, above the row's target (docs/benchmarks.md, "Rows over their
   * target"): the target, printed beside the budget and in the verdict while the row is over it; not a breach.
   */
  target?: { roundTrips?: number; rcu?: number };
}

export interface Row {
  scenario: string;
  status: number;
  records: number;
  round_trips: number;
  calls: number;
  read_units: number;
  write_units: number;
  items_read: number;
  writes: number;
  limiter_round_trips: number;
  limiter_calls: number;
  limiter_read_units: number;
  limiter_write_units: number;
  limiter_writes: number;
  ms: number;
  budget: string;
  limiter_budget: string;
  /** How the row stands against its target where its budget is above it (`rt 5 > 3`), else ''. */
  over_target: string;
  verdict: string;
}

export function describeBudget(b: Budget | undefined): string {
  if (!b) return '';
  const parts: string[] = [];
  const target = (n: number | undefined) => (n === undefined ? '' : ` (target ${n})`);
  if (b.roundTrips !== undefined) parts.push(`rt<=${b.roundTrips}${target(b.target?.roundTrips)}`);
  if (b.rcu !== undefined) parts.push(`RCU<=${b.rcu}${target(b.target?.rcu)}`);
  if (b.itemsRead) parts.push(`items<=${b.itemsRead.perReturned}xN+${b.itemsRead.plus}`);
  if (b.writes !== undefined) parts.push(`writes=${b.writes}`);
  return parts.join(' ');
}

export function describeLimiterBudget(l: LimiterBudget | undefined): string {
  if (!l) return '';
  if (l.roundTrips === 0 && l.rcu === 0 && l.writes === 0) return 'none';
  return `rt<=${l.roundTrips} RCU<=${l.rcu} writes<=${l.writes}`;
}

const failedTry = (r: Measured) => r.status < 200 || r.status >= 300 || r.missing.length > 0;

/**
 * The breaches of `budget` by one measured request: the request's own counts against the row's budget, the
 * limiter's against the row's limiter budget, each apart. A status other than 2xx, a missing metrics header (a
 * count read as 0 would pass any budget) and a scenario without a budget are breaches too.
 */
export function breaches(r: Measured, b: Budget | undefined): string[] {
  const out: string[] = [];
  if (r.status < 200 || r.status >= 300) out.push(`status ${r.status}`);
  if (r.missing.length) out.push(`no ${r.missing.join(', ')}`);
  if (!b) return [...out, 'no budget'];
  if (b.roundTrips !== undefined && r.roundTrips > b.roundTrips) out.push(`${r.roundTrips} rt > ${b.roundTrips}`);
  if (b.rcu !== undefined && r.rcu > b.rcu) out.push(`${r.rcu} RCU > ${b.rcu}`);
  if (b.itemsRead) {
    const limit = b.itemsRead.perReturned * recordsOf(r) + b.itemsRead.plus;
    if (r.itemsRead > limit) out.push(`${r.itemsRead} items > ${limit}`);
  }
  if (b.writes !== undefined && r.writes !== b.writes) out.push(`${r.writes} writes != ${b.writes}`);
  const l = b.limiter;
  if (r.limiter.roundTrips > l.roundTrips) out.push(`limiter ${r.limiter.roundTrips} rt > ${l.roundTrips}`);
  if (r.limiter.rcu > l.rcu) out.push(`limiter ${r.limiter.rcu} RCU > ${l.rcu}`);
  if (r.limiter.writes > l.writes) out.push(`limiter ${r.limiter.writes} writes > ${l.writes}`);
  return out;
}

/** Where a row's worst costs stand above its target (the budget being today's cost): `rt 5 > 3`. */
export function overTarget(r: Measured, b: Budget | undefined): string[] {
  const out: string[] = [];
  if (b?.target?.roundTrips !== undefined && r.roundTrips > b.target.roundTrips) out.push(`rt ${r.roundTrips} > ${b.target.roundTrips}`);
  if (b?.target?.rcu !== undefined && r.rcu > b.target.rcu) out.push(`RCU ${r.rcu} > ${b.target.rcu}`);
  return out;
}

/**
 * One row from a scenario's tries: every try is held to the budget (a breach by any try fails the row), and the
 * row reports the worst of them (`worstOf`).
 */
export function rowOf(scenario: string, tries: Measured[], b: Budget | undefined, extra: string[] = []): Row {
  if (!tries.length) throw new Error(`${scenario}: no try`);
  const r = worstOf(tries);
  const broken = [...new Set([...tries.flatMap((t) => breaches(t, b)), ...extra])];
  const over = overTarget(r, b);
  return {
    scenario,
    status: r.status,
    records: recordsOf(r),
    round_trips: r.roundTrips,
    calls: r.calls,
    read_units: r.rcu,
    write_units: r.wcu,
    items_read: r.itemsRead,
    writes: r.writes,
    limiter_round_trips: r.limiter.roundTrips,
    limiter_calls: r.limiter.calls,
    limiter_read_units: r.limiter.rcu,
    limiter_write_units: r.limiter.wcu,
    limiter_writes: r.limiter.writes,
    ms: Math.round(r.ms),
    budget: describeBudget(b),
    limiter_budget: describeLimiterBudget(b?.limiter),
    over_target: over.join(', '),
    verdict: broken.length ? `FAIL: ${broken.join('; ')}` : over.length ? `ok (over target: ${over.join(', ')})` : 'ok',
  };
}

/**
 * The worst of a scenario's tries, the request's and the limiter's costs each their own worst: the request's
 * counts from the try with the most round trips of its own (then RCU, then items read), the limiter's from the
 * try with the most limiter round trips (then RCU: the one after the limiter's reset). A try that failed (not 2xx,
 * or a metrics header missing) is the worst of all.
 */
export function worstOf(tries: Measured[]): Measured {
  const bad = tries.find(failedTry);
  if (bad) return bad;
  const request = [...tries].sort((a, b) => b.roundTrips - a.roundTrips || b.rcu - a.rcu || b.itemsRead - a.itemsRead)[0]!;
  const limiter = [...tries].sort(
    (a, b) => b.limiter.roundTrips - a.limiter.roundTrips || b.limiter.rcu - a.limiter.rcu || b.limiter.writes - a.limiter.writes,
  )[0]!;
  return { ...request, limiter: limiter.limiter };
}

/**
 * Budgets with a `target` are what the code costs today, above the row's target (docs/benchmarks.md "Rows over
 * their target"). Five of them passed before only through the limiter's allowance that the request's own counts
 * could spend (request + limiter against budget + 5 round trips and 0.5 RCU): a member's reads (the caller's
 * teams, 0.5 RCU, beside the caller) and the list pages whose keys take a third half unit (a check-in page's
 * follow-up Query; the last-check-in-desc cursor page on the full seed).
 */
export const BUDGETS = {
  get: { roundTrips: 1, rcu: 2, limiter: LIMITER_COLD },
  // the caller (1, read strongly) and the goal (1) in one batch, the caller's teams beside them (0.5)
  memberGet: { roundTrips: 1, rcu: 2.5, limiter: LIMITER_COLD, target: { rcu: 2 } },
  page1: { roundTrips: 2, rcu: 12, limiter: LIMITER_COLD },
  // the full seed's cursor page after page 1 of key results by last check-in, newest first: 12.5 (page 1: 12)
  lastCheckinCursorPage: { roundTrips: 2, rcu: 12.5, limiter: LIMITER_COLD, target: { rcu: 12 } },
  // page 1 and its cursor page as a member: the caller's teams (0.5) beside the caller
  memberPage1: { roundTrips: 2, rcu: 12.5, limiter: LIMITER_COLD, target: { rcu: 12 } },
  page50: { roundTrips: 3, rcu: 30, limiter: LIMITER_COLD },
  indexedFilter: { itemsRead: { perReturned: 2, plus: 20 }, limiter: LIMITER_COLD },
  count: { roundTrips: 2, limiter: LIMITER_COLD },
  ancestor: { roundTrips: 4, limiter: LIMITER_COLD },
  // issue 33 item 8, with the Idempotency-Key (its record is put beside the caller's read, then completed after the
  // transaction): create <= 3 round trips (the caller beside the create's one batch and the record, the transaction,
  // the record's answer); a check-in <= 4, with a 3-level rollup or none (the caller beside the goal and the record,
  // the goal's order, access and rollup ancestors at once, the transaction, the record's answer)
  create: { roundTrips: 3, writes: 1 + 2, limiter: LIMITER_COLD },
  checkinRollup: { roundTrips: 4, limiter: LIMITER_COLD },
  update: { roundTrips: 3, writes: 1, limiter: LIMITER_COLD },
  checkin: { roundTrips: 4, writes: 3, limiter: LIMITER_COLD },
  // issue 20's target. Round trips: the caller beside the 2 list shards' first Queries (16 keys each), at most one
  // shard's follow-up (only one shard can hold more than 16 of a page's 21 keys), the check-ins. RCU: the caller 1
  // (read strongly), the 2 Queries 0.5 each (16 keys of 247 bytes fit 4 KB), 20 check-ins at 0.5: 12 (16 shards
  // took 18.5); a page with the follow-up 12.5, over the target. The tenant's reshard marker (0.5, beside the
  // Queries) is read once a container: the warm-up call reads it
  checkinPage1: { roundTrips: 3, rcu: 12.5, limiter: LIMITER_COLD, target: { rcu: 12 } },
  usersPage1: { roundTrips: 2, rcu: 12, limiter: LIMITER_COLD },
  // GET /events: the caller, the hours directory (up to 7 entries), the page's hour (two when the page crosses an
  // hour); the page and one event more (is there a next page?)
  eventsPage1: { roundTrips: 4, rcu: 12, itemsRead: { perReturned: 1, plus: 1 + 7 + 1 }, limiter: LIMITER_COLD },
  // one scheduled run of an http_json source by the sync worker (scripts/lib/bench-sync.ts; no limiter): the source,
  // its run's log entry and check-in (a run killed before its log), the creator, the goal, then for a changed value
  // the check-in command (3 round trips, 1 write), then the source again and the log's one transaction
  syncChanged: { roundTrips: 10, rcu: 6, writes: 2, limiter: NO_LIMITER },
  syncUnchanged: { roundTrips: 7, rcu: 4, writes: 1, limiter: NO_LIMITER },
  // the push secret's source and its creator, the check-in command, the log's transaction; the Idempotency-Key's two writes
  push: { roundTrips: 10, rcu: 6, writes: 1 + 1 + 2, limiter: LIMITER_COLD },
} satisfies Record<string, Budget>;
