import type { Measured } from './bench-http.ts';
import { recordsOf } from './bench-http.ts';

/** The data-access budgets of issue 9 section 2; each scenario names the ones it is held to. */
export interface Budget {
  roundTrips?: number;
  rcu?: number;
  /** Items read at most `perReturned` x records returned + `plus`. */
  itemsRead?: { perReturned: number; plus: number };
  /** Write calls (one transaction: 1). */
  writes?: number;
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
  ms: number;
  budget: string;
  verdict: string;
}

export function describeBudget(b: Budget | undefined): string {
  if (!b) return '';
  const parts: string[] = [];
  if (b.roundTrips !== undefined) parts.push(`rt<=${b.roundTrips}`);
  if (b.rcu !== undefined) parts.push(`RCU<=${b.rcu}`);
  if (b.itemsRead) parts.push(`items<=${b.itemsRead.perReturned}xN+${b.itemsRead.plus}`);
  if (b.writes !== undefined) parts.push(`writes=${b.writes}`);
  return parts.join(' ');
}

/** The breaches of `budget` by one measured request (an error status is a breach too). */
export function breaches(r: Measured, b: Budget | undefined): string[] {
  const out: string[] = [];
  if (r.status >= 300) out.push(`status ${r.status}`);
  if (!b) return out;
  if (b.roundTrips !== undefined && r.roundTrips > b.roundTrips) out.push(`${r.roundTrips} rt > ${b.roundTrips}`);
  if (b.rcu !== undefined && r.rcu > b.rcu) out.push(`${r.rcu} RCU > ${b.rcu}`);
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
    ms: Math.round(r.ms),
    budget: describeBudget(b),
    verdict: b || extra.length ? (broken.length ? `FAIL: ${broken.join('; ')}` : 'ok') : broken.join('; '),
  };
}

export const BUDGETS = {
  get: { roundTrips: 1, rcu: 2 },
  page1: { roundTrips: 2, rcu: 12 },
  page50: { roundTrips: 3, rcu: 30 },
  indexedFilter: { itemsRead: { perReturned: 2, plus: 20 } },
  count: { roundTrips: 2 },
  ancestor: { roundTrips: 4 },
  create: { roundTrips: 3, writes: 1 },
  checkinRollup: { roundTrips: 6 },
} satisfies Record<string, Budget>;
