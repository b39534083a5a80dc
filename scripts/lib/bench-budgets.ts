import type { Measured } from './bench-http.ts';
import { recordsOf } from './bench-http.ts';

/**
 * The rate limit the bench runs under: on, as deployed, and high enough to admit everything the bench sends (the
 * user's bucket is half of it). The limiter's calls are then part of what each request costs (docs/benchmarks.md).
 */
export const BENCH_RATE_LIMIT = { TENANT_RATE_LIMIT_RPS: '100000', TENANT_RATE_LIMIT_BURST: '400000' };

/**
 * What the rate limiter adds to a request whose container holds no lease and has not read the tenant's limits
 * for 10 s, in sequence after the caller's read: the limits read, then the user's lease, then the tenant's, each
 * lease one UpdateItem, or two when its shard is not as the container assumed (a new one assumes full: idle or
 * new), and the write for a full shard fails before the one for a shard in use (shared/db/rate-limit-store.ts
 * `leaseTokens`). A container holding both leases pays nothing.
 */
export const LIMITER_ALLOWANCE = { roundTrips: 5, rcu: 0.5 };

/**
 * The data-access budgets (issue 9 section 2, issue 20); each scenario names the ones it is held to. Round trips and
 * RCU are the request's own: the check holds the request's plus the limiter's to them plus LIMITER_ALLOWANCE.
 */
export interface Budget {
  roundTrips?: number;
  rcu?: number;
  /** Items read at most `perReturned` x records returned + `plus`. */
  itemsRead?: { perReturned: number; plus: number };
  /** Write calls (one transaction: 1). */
  writes?: number;
  /** A worker's run (no rate limiter): round trips and RCU held without LIMITER_ALLOWANCE. */
  worker?: true;
}

/** What the limiter may add on top of a budget: nothing for a worker's run. */
const allowanceOf = (b: Budget) => (b.worker ? { roundTrips: 0, rcu: 0 } : LIMITER_ALLOWANCE);

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
  ms: number;
  budget: string;
  verdict: string;
}

export function describeBudget(b: Budget | undefined): string {
  if (!b) return '';
  const parts: string[] = [];
  const plus = (n: number) => (b.worker ? '' : `+${n}`);
  if (b.roundTrips !== undefined) parts.push(`rt<=${b.roundTrips}${plus(LIMITER_ALLOWANCE.roundTrips)}`);
  if (b.rcu !== undefined) parts.push(`RCU<=${b.rcu}${plus(LIMITER_ALLOWANCE.rcu)}`);
  if (b.itemsRead) parts.push(`items<=${b.itemsRead.perReturned}xN+${b.itemsRead.plus}`);
  if (b.writes !== undefined) parts.push(`writes=${b.writes}`);
  return parts.join(' ');
}

/** Round trips and RCU of the request and of the limiter's calls for it: what the budgets hold. */
export const totalRoundTrips = (r: Measured) => r.roundTrips + r.limiter.roundTrips;
export const totalRcu = (r: Measured) => r.rcu + r.limiter.rcu;

/**
 * The breaches of `budget` by one measured request: a status other than 2xx, a missing metrics header (a count read
 * as 0 would pass any budget) and a scenario without a budget are breaches too.
 */
export function breaches(r: Measured, b: Budget | undefined): string[] {
  const out: string[] = [];
  if (r.status < 200 || r.status >= 300) out.push(`status ${r.status}`);
  if (r.missing.length) out.push(`no ${r.missing.join(', ')}`);
  if (!b) return [...out, 'no budget'];
  const rt = totalRoundTrips(r);
  const rcu = totalRcu(r);
  const allow = allowanceOf(b);
  if (b.roundTrips !== undefined && rt > b.roundTrips + allow.roundTrips) out.push(`${rt} rt > ${b.roundTrips}+${allow.roundTrips}`);
  if (b.rcu !== undefined && rcu > b.rcu + allow.rcu) out.push(`${rcu} RCU > ${b.rcu}+${allow.rcu}`);
  if (b.itemsRead) {
    const limit = b.itemsRead.perReturned * recordsOf(r) + b.itemsRead.plus;
    if (r.itemsRead > limit) out.push(`${r.itemsRead} items > ${limit}`);
  }
  if (b.writes !== undefined && r.writes !== b.writes) out.push(`${r.writes} writes != ${b.writes}`);
  return out;
}

export function rowOf(scenario: string, r: Measured, b: Budget | undefined, extra: string[] = []): Row {
  const broken = [...breaches(r, b), ...extra];
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
    ms: Math.round(r.ms),
    budget: describeBudget(b),
    verdict: broken.length ? `FAIL: ${broken.join('; ')}` : 'ok',
  };
}

/**
 * The worst of a scenario's tries: most round trips (the limiter's included), then RCU, then items read; a try
 * that failed (not 2xx, or a metrics header missing) is the worst of all.
 */
export function worstOf(tries: Measured[]): Measured {
  const bad = tries.find((r) => r.status < 200 || r.status >= 300 || r.missing.length);
  if (bad) return bad;
  return [...tries].sort((a, b) => totalRoundTrips(b) - totalRoundTrips(a) || totalRcu(b) - totalRcu(a) || b.itemsRead - a.itemsRead)[0]!;
}

export const BUDGETS = {
  get: { roundTrips: 1, rcu: 2 },
  memberGet: { roundTrips: 1, rcu: 2 },
  page1: { roundTrips: 2, rcu: 12 },
  memberPage1: { roundTrips: 2, rcu: 12 },
  page50: { roundTrips: 3, rcu: 30 },
  indexedFilter: { itemsRead: { perReturned: 2, plus: 20 } },
  count: { roundTrips: 2 },
  ancestor: { roundTrips: 4 },
  // a POST's Idempotency-Key adds its record's two writes (in progress, then the answer), each a round trip
  create: { roundTrips: 3 + 2, writes: 1 + 2 },
  checkinRollup: { roundTrips: 6 + 2 },
  update: { roundTrips: 3, writes: 1 },
  checkin: { roundTrips: 7, writes: 3 },
  // issue 20's target. Round trips: the caller beside the 2 list shards' first Queries (16 keys each), at most one
  // shard's follow-up (only one shard can hold more than 16 of a page's 21 keys), the check-ins. RCU: the caller 1
  // (read strongly), the 2 Queries 0.5 each (16 keys of 247 bytes fit 4 KB), 20 check-ins at 0.5: 12 (16 shards
  // took 18.5); a page with the follow-up 12.5, within the limiter's allowance only. The tenant's reshard marker
  // (0.5, beside the Queries) is read once a container: the warm-up call reads it
  checkinPage1: { roundTrips: 3, rcu: 12 },
  usersPage1: { roundTrips: 2, rcu: 12 },
  // GET /events: the caller, the hours directory (up to 7 entries), the page's hour (two when the page crosses an
  // hour); the page and one event more (is there a next page?)
  eventsPage1: { roundTrips: 4, rcu: 12, itemsRead: { perReturned: 1, plus: 1 + 7 + 1 } },
  // one scheduled run of an http_json source by the sync worker (scripts/lib/bench-sync.ts; no limiter): the source,
  // its run's log entry and check-in (a run killed before its log), the creator, the goal, then for a changed value
  // the check-in command (3 round trips, 1 write), then the source again and the log's one transaction
  syncChanged: { worker: true, roundTrips: 10, rcu: 6, writes: 2 },
  syncUnchanged: { worker: true, roundTrips: 7, rcu: 4, writes: 1 },
  // the push secret's source and its creator, the check-in command, the log's transaction; the Idempotency-Key's two writes
  push: { roundTrips: 10, rcu: 6, writes: 1 + 1 + 2 },
} satisfies Record<string, Budget>;
