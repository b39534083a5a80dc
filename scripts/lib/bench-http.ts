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
  ms: number;
}

export async function call(baseUrl: string, token: string, method: string, path: string, body?: unknown): Promise<Measured> {
  const started = performance.now();
  const send = () =>
    fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  // A kept-alive socket the server closed as it was reused resets before the request is read: send it again.
  const res = await send().catch(() => send());
  const text = await res.text();
  const h = (n: string) => Number(res.headers.get(n) ?? 0);
  return {
    status: res.status,
    body: text ? JSON.parse(text) : undefined,
    roundTrips: h('x-db-round-trips'),
    calls: h('x-db-calls'),
    writes: h('x-db-writes'),
    rcu: h('x-db-read-units'),
    wcu: h('x-db-write-units'),
    itemsRead: h('x-db-items-read'),
    ms: performance.now() - started,
  };
}

export async function must(baseUrl: string, token: string, method: string, path: string, body?: unknown): Promise<Measured> {
  const r = await call(baseUrl, token, method, path, body);
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
