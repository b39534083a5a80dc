import { randomUUID } from 'node:crypto';

/** The request's own DynamoDB counts (x-db-*) and the rate limiter's for it (x-db-limiter-*): every one must be there. */
export const METRIC_HEADERS = [
  'x-db-round-trips',
  'x-db-calls',
  'x-db-writes',
  'x-db-read-units',
  'x-db-write-units',
  'x-db-items-read',
  'x-db-limiter-round-trips',
  'x-db-limiter-calls',
  'x-db-limiter-writes',
  'x-db-limiter-read-units',
  'x-db-limiter-write-units',
] as const;

/** The rate limiter's DynamoDB calls for the request (its limits read, its token leases), in sequence after the caller's read. */
export interface LimiterCost {
  roundTrips: number;
  calls: number;
  writes: number;
  rcu: number;
  wcu: number;
}

/** One measured request against the local stack: status, body and the x-db-* cost headers. */
export interface Measured {
  status: number;
  body: any;
  /** DynamoDB round trips in sequence (concurrent calls count once). */
  roundTrips: number;
  calls: number;
  writes: number;
  rcu: number;
  wcu: number;
  itemsRead: number;
  limiter: LimiterCost;
  /** Metric headers the answer lacks (a 500 carries none): a measurement that cannot be trusted. */
  missing: string[];
  ms: number;
}

/**
 * One request, measured. A POST carries an Idempotency-Key, as the clients the contract describes send one: its
 * record is part of the cost (`idempotencyKey: false`: the seed's POSTs, which nothing measures).
 */
export async function call(
  baseUrl: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  opts: { idempotencyKey?: boolean } = {},
): Promise<Measured> {
  const started = performance.now();
  const idempotency: Record<string, string> = method === 'POST' && opts.idempotencyKey !== false ? { 'idempotency-key': randomUUID() } : {};
  const send = () =>
    fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...idempotency, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  // A kept-alive socket the server closed as it was reused resets before the request is read: send it again.
  const res = await send().catch(() => send());
  const text = await res.text();
  const h = (n: (typeof METRIC_HEADERS)[number]) => Number(res.headers.get(n) ?? 0);
  return {
    status: res.status,
    body: text ? JSON.parse(text) : undefined,
    roundTrips: h('x-db-round-trips'),
    calls: h('x-db-calls'),
    writes: h('x-db-writes'),
    rcu: h('x-db-read-units'),
    wcu: h('x-db-write-units'),
    itemsRead: h('x-db-items-read'),
    limiter: {
      roundTrips: h('x-db-limiter-round-trips'),
      calls: h('x-db-limiter-calls'),
      writes: h('x-db-limiter-writes'),
      rcu: h('x-db-limiter-read-units'),
      wcu: h('x-db-limiter-write-units'),
    },
    missing: METRIC_HEADERS.filter((n) => !Number.isFinite(Number(res.headers.get(n) ?? Number.NaN))),
    ms: performance.now() - started,
  };
}

export async function must(baseUrl: string, token: string, method: string, path: string, body?: unknown): Promise<Measured> {
  const r = await call(baseUrl, token, method, path, body, { idempotencyKey: false }); // seeding: nothing measured
  if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
  return r;
}

/** Runs `fn` for 0..n-1 with `concurrency` workers; results in index order. */
export async function pool<T>(n: number, concurrency: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await fn(i);
      }
    }),
  );
  return out;
}

/** Records of a list answer, or 1 for a single record. */
export const recordsOf = (r: Measured): number =>
  Array.isArray(r.body?.data?.records) ? r.body.data.records.length : r.body?.data?.record || r.body?.uuid ? 1 : 0;
