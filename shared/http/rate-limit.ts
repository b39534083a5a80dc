import type { Db } from '#shared/db/client.ts';
import { limiterDbMetrics, withDbMetrics } from '#shared/db/metrics.ts';
import { leaseTokens, limiterKeys, readTenantLimits, type Cell, type TenantLimits } from '#shared/db/rate-limit-store.ts';
import { RateLimitedError } from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';
import { emitMetric } from '#shared/observability/emit.ts';

/** Requests per second and burst of one bucket. */
export interface Limit {
  rps: number;
  burst: number;
}

/** The limits that apply to a tenant's requests; an absent one is unlimited. */
export interface EffectiveLimits {
  tenant?: Limit;
  user?: Limit;
}

/** Shards of a bucket: about one per 200 rps, each with at least one token of burst. */
export const shardsFor = (limit: Limit) => Math.max(1, Math.min(16, Math.ceil(limit.rps / 200), Math.floor(limit.burst)));

/** Tokens a container first leases at once: about 100 ms of its shard's rate, 1 to 20, never more than the shard's burst. */
export const blockFor = (limit: Limit, shards: number) =>
  Math.max(1, Math.min(20, Math.floor(limit.burst / shards), Math.round(limit.rps / shards / 10)));

/**
 * The most a lease grows to for a busy container: about 100 ms of the shard's rate, at most its burst and 1,000.
 * A container that spends its leases fast leases more at once (doubling from `blockFor`), one that lets them
 * expire less, so a lease costs few requests a write at any rate while a quiet container holds little budget.
 */
export const maxBlockFor = (limit: Limit, shards: number) =>
  Math.max(1, Math.min(1000, Math.floor(limit.burst / shards), Math.round(limit.rps / shards / 10)));

const cellOf = (limit: Limit, shards: number): Cell => {
  const intervalMs = 1000 / (limit.rps / shards);
  return { intervalMs, capacityMs: (limit.burst / shards) * intervalMs };
};

/** One bucket of the table's limiter: its name (for the RateLimit headers), its id in this container, its limit and its shard keys. */
export interface Bucket {
  name: string;
  id: string;
  limit: Limit;
  key: (shard: number) => Record<string, string>;
}

/** The buckets a request of the user draws from, the user's first, then the tenant's (none when unlimited). */
function bucketsOf(limits: EffectiveLimits, tenantId: string, userId: string) {
  const out: Bucket[] = [];
  if (limits.user)
    out.push({ name: 'user', limit: limits.user, key: (s) => limiterKeys.userShard(tenantId, userId, s), id: `${tenantId}/${userId}` });
  if (limits.tenant) out.push({ name: 'tenant', limit: limits.tenant, key: (s) => limiterKeys.tenantShard(tenantId, s), id: tenantId });
  return out;
}

/** The service defaults (environment) merged with what the operator set for the tenant. */
export function effectiveLimits(
  defaults: { rps: number; burst: number; userRps?: number; userBurst?: number },
  stored: TenantLimits | undefined,
): EffectiveLimits {
  const rps = stored?.rps ?? defaults.rps;
  const burst = Math.max(1, stored?.burst ?? (stored?.rps !== undefined ? stored.rps * 4 : defaults.burst));
  const tenant = rps > 0 ? { rps, burst } : undefined;
  const userRps = stored?.user_rps ?? (stored?.rps !== undefined ? rps / 2 : (defaults.userRps ?? rps / 2));
  const userBurst = Math.max(
    1,
    stored?.user_burst ?? (stored?.rps !== undefined || stored?.burst !== undefined ? burst / 2 : (defaults.userBurst ?? burst / 2)),
  );
  const user = userRps > 0 ? { rps: userRps, burst: userBurst } : undefined;
  return { tenant, user };
}

/** One bucket as this container sees it: tokens leased and not yet spent, and what it last learnt of the shards. */
interface LocalBucket {
  tokens: number;
  leaseExpiresAt: number;
  denyUntil: number;
  /** Latest known `tat` per shard (for the RateLimit header's remaining estimate). */
  tat: number;
  /** Tokens the next lease asks for (between blockFor and maxBlockFor), and when and how many the last one got. */
  block: number;
  leasedAt: number;
  leased: number;
  /** Whether the last lease found its shard full (idle): the next one tries that write first. */
  full: boolean;
  /** The lease in flight: concurrent requests of this container wait for it rather than each leasing its own. */
  leasing?: Promise<'granted' | 'refused' | 'unavailable'>;
}

export interface RateLimiterOptions {
  db: (tenantId: string) => Promise<Db>;
  tableName: () => string;
  defaults: () => { rps: number; burst: number; userRps?: number; userBurst?: number };
  now?: () => number;
  random?: () => number;
  /** Leased tokens not spent within this time are dropped, so a container cannot bank budget. */
  leaseMs?: number;
  /** How long a container trusts the tenant's operator-set limits before reading them again. */
  configTtlMs?: number;
}

export type RateLimitHeaders = Record<'RateLimit-Policy' | 'RateLimit', string>;

/**
 * The distributed limiter (contract section 11). A tenant's budget is a token bucket in DynamoDB, split over
 * shard items (shared/db/rate-limit-store.ts); each container leases small blocks of tokens from a random shard
 * and spends them locally, so a request costs no write and every container draws on the same budget. The
 * user's bucket (default half the tenant's) is checked first, so one user alone cannot drain the tenant's.
 * Only called after the caller is authenticated and active: a refused token costs no budget.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, LocalBucket>();
  private readonly limits = new Map<string, { value: Promise<EffectiveLimits>; at: number }>();
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(private readonly opts: RateLimiterOptions) {
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
  }

  /**
   * Forgets this container's leased tokens and cached limits, as a new container starts: `npm run bench` measures
   * what a request costs when its container holds no lease (docs/benchmarks.md).
   */
  reset(): void {
    this.buckets.clear();
    this.limits.clear();
  }

  /** Admits one request of the user or throws 429 (with Retry-After and RateLimit headers). Returns the response headers, none when unlimited. */
  async take(tenantId: string, userId: string): Promise<RateLimitHeaders | undefined> {
    const limits = await this.limitsOf(tenantId);
    if (!limits.tenant && !limits.user) return undefined;
    const checks = bucketsOf(limits, tenantId, userId);
    for (const c of checks) {
      const retryAfterMs = await this.takeOne(tenantId, c.id, c.limit, c.key);
      if (retryAfterMs !== undefined) {
        const err = new RateLimitedError(retryAfterMs / 1000);
        Object.assign(err.headers, this.headers(checks, { name: c.name, retryAfterMs }));
        await emitMetric('LimiterRefusals');
        throw err;
      }
    }
    return this.headers(checks);
  }

  /**
   * Takes one token from each of `buckets` in turn, leased in `tenantId`'s partition with its credentials, as `take`
   * does for a request (no round trip while this container's lease lasts); stops at the first refusal and returns
   * it: the bucket's name and the ms until it may have a token. For budgets that are not a tenant's requests (the
   * failed-credential budget, shared/http/credential-budget.ts).
   */
  async spend(tenantId: string, buckets: readonly Bucket[]): Promise<{ name: string; retryAfterMs: number } | undefined> {
    for (const c of buckets) {
      const retryAfterMs = await this.takeOne(tenantId, c.id, c.limit, c.key);
      if (retryAfterMs !== undefined) return { name: c.name, retryAfterMs };
    }
    return undefined;
  }

  /**
   * The ms until `bucket` may have a token, when this container already knows it has none (its last lease was
   * refused and the refusal holds), else undefined. No round trip: a check before work that a refusal should spare.
   */
  knownRefusal(bucket: Pick<Bucket, 'id' | 'limit'>): number | undefined {
    const b = this.buckets.get(`${bucket.id}@${bucket.limit.rps}/${bucket.limit.burst}`);
    const now = this.now();
    if (!b || (b.tokens >= 1 && now < b.leaseExpiresAt)) return undefined;
    return now < b.denyUntil ? b.denyUntil - now : undefined;
  }

  /**
   * Bulk work (an import's rows, shared/domain/imports/worker.ts): takes up to `want` tokens from the user's and
   * then the tenant's bucket at once, as if each were a request of the user. Grants what both buckets have (at
   * least one), or none with the ms until one may be; tokens the user's bucket granted beyond the tenant's go
   * back to this container's lease for its next call. Unlimited: everything.
   */
  async takeUpTo(tenantId: string, userId: string, want: number): Promise<{ granted: number; retryAfterMs: number }> {
    const limits = await this.limitsOf(tenantId);
    let n = Math.max(1, Math.floor(want));
    const checks = bucketsOf(limits, tenantId, userId);
    const taken: Array<{ bucket: LocalBucket; n: number }> = [];
    for (const c of checks) {
      const r = await this.takeMany(tenantId, c.id, c.limit, c.key, n);
      if (r.granted === 0) {
        for (const t of taken) this.giveBack(t.bucket, t.n);
        return { granted: 0, retryAfterMs: r.retryAfterMs };
      }
      for (const t of taken) this.giveBack(t.bucket, t.n - r.granted);
      for (const t of taken) t.n = r.granted;
      taken.push({ bucket: r.bucket, n: r.granted });
      n = r.granted;
    }
    return { granted: n, retryAfterMs: 0 };
  }

  /** Unspent tokens back into this container's lease (spent by its next call, or dropped when the lease ends). */
  private giveBack(b: LocalBucket, n: number): void {
    if (n <= 0) return;
    b.tokens += n;
    b.leaseExpiresAt = Math.max(b.leaseExpiresAt, this.now() + (this.opts.leaseMs ?? 1000));
  }

  private bucketOf(id: string, limit: Limit): LocalBucket {
    const bucketId = `${id}@${limit.rps}/${limit.burst}`;
    let b = this.buckets.get(bucketId);
    if (!b) {
      b = { tokens: 0, leaseExpiresAt: 0, denyUntil: 0, tat: 0, block: 0, leasedAt: 0, leased: 0, full: true };
      this.buckets.set(bucketId, b);
      if (this.buckets.size > 10_000) this.buckets.delete(this.buckets.keys().next().value!); // bound memory
    }
    return b;
  }

  /** Up to `want` tokens of one bucket: this container's leased ones first, else one shard's (at most its burst). */
  private async takeMany(
    tenantId: string,
    id: string,
    limit: Limit,
    keyOf: (shard: number) => Record<string, string>,
    want: number,
  ): Promise<{ granted: number; retryAfterMs: number; bucket: LocalBucket }> {
    const now = this.now();
    const b = this.bucketOf(id, limit);
    if (b.tokens >= 1 && now < b.leaseExpiresAt) {
      const g = Math.min(want, Math.floor(b.tokens));
      b.tokens -= g;
      return { granted: g, retryAfterMs: 0, bucket: b };
    }
    b.tokens = 0;
    const shards = shardsFor(limit);
    const cell = cellOf(limit, shards);
    const shard = Math.floor(this.random() * shards);
    let res;
    try {
      res = await withDbMetrics(limiterDbMetrics(), async () =>
        leaseTokens(
          await this.opts.db(tenantId),
          this.opts.tableName(),
          keyOf(shard),
          cell,
          Math.min(want, Math.max(1, Math.floor(limit.burst / shards))),
          now,
          b.full,
        ),
      );
    } catch (err) {
      // as for requests: a DynamoDB hiccup does not stop the work, it goes on unmetered
      logger.warn('rate limiter unavailable, bulk work admitted', { error: String(err) });
      return { granted: want, retryAfterMs: 0, bucket: b };
    }
    b.tat = res.tat;
    b.full = res.full;
    if (res.granted > 0) return { granted: res.granted, retryAfterMs: 0, bucket: b };
    return { granted: 0, retryAfterMs: 'retryAfterMs' in res ? res.retryAfterMs : cell.intervalMs, bucket: b };
  }

  /** Undefined when a token was taken, else the ms until one may be. */
  private async takeOne(
    tenantId: string,
    id: string,
    limit: Limit,
    keyOf: (shard: number) => Record<string, string>,
  ): Promise<number | undefined> {
    const b = this.bucketOf(id, limit);
    // Each pass takes a leased token, refuses, or waits for a lease (its own or one already in flight) and looks
    // again: a granted lease's tokens go to the requests that waited for it, and one left without a token leases
    // again; a refused lease refuses every request that waited for it, however long the refusal took.
    for (;;) {
      const now = this.now();
      if (b.tokens >= 1 && now < b.leaseExpiresAt) {
        b.tokens -= 1;
        return undefined;
      }
      if (now < b.denyUntil) return b.denyUntil - now; // known empty: refuse without a write
      b.leasing ??= this.lease(tenantId, b, limit, keyOf).finally(() => (b.leasing = undefined));
      const outcome = await b.leasing;
      // The limiter must not turn a DynamoDB hiccup into an outage: admit (the lease logged it).
      if (outcome === 'unavailable') return undefined;
      if (outcome === 'refused') return Math.max(1, b.denyUntil - this.now());
    }
  }

  /** Leases the bucket's next block into `b` (tokens, or a time to refuse until). */
  private async lease(
    tenantId: string,
    b: LocalBucket,
    limit: Limit,
    keyOf: (shard: number) => Record<string, string>,
  ): Promise<'granted' | 'refused' | 'unavailable'> {
    const now = this.now();
    const leaseMs = this.opts.leaseMs ?? 1000;
    const shards = shardsFor(limit);
    // Grow the block while leases are spent within a quarter of their time, shrink it while they expire half unspent.
    if (b.block === 0) b.block = blockFor(limit, shards);
    else if (b.tokens < 1 && now - b.leasedAt < leaseMs / 4) b.block = Math.min(maxBlockFor(limit, shards), b.block * 2);
    else if (now >= b.leaseExpiresAt && b.tokens > b.leased / 2) b.block = Math.max(blockFor(limit, shards), Math.floor(b.block / 2));
    b.tokens = 0;
    const cell = cellOf(limit, shards);
    const first = Math.floor(this.random() * shards);
    let retryAfterMs = Infinity;
    // A refusal from one shard may be that shard's bad luck: try one other before refusing.
    for (const shard of shards > 1 ? [first, (first + 1 + Math.floor(this.random() * (shards - 1))) % shards] : [first]) {
      let res;
      try {
        res = await withDbMetrics(limiterDbMetrics(), async () =>
          leaseTokens(await this.opts.db(tenantId), this.opts.tableName(), keyOf(shard), cell, b.block, now, b.full),
        );
      } catch (err) {
        logger.warn('rate limiter unavailable, request admitted', { error: String(err) });
        return 'unavailable';
      }
      b.tat = res.tat;
      b.full = res.full;
      if (res.granted > 0) {
        b.tokens = res.granted;
        b.leased = res.granted;
        b.leasedAt = now;
        // from the answer: a lease slower than its time still serves the requests that waited for it
        b.leaseExpiresAt = this.now() + leaseMs;
        return 'granted';
      }
      retryAfterMs = Math.min(retryAfterMs, 'retryAfterMs' in res ? res.retryAfterMs : cell.intervalMs);
    }
    // Refuse locally until about a block has refilled (at most half the shard's capacity, so nothing overflows
    // meanwhile): a flood of refused requests then costs few writes.
    b.denyUntil = now + Math.max(retryAfterMs, Math.min(blockFor(limit, shards) * cell.intervalMs, cell.capacityMs / 2));
    return 'refused';
  }

  /** IETF httpapi ratelimit-headers: `RateLimit-Policy: "tenant";q=<burst>;w=<s>` and `RateLimit: "tenant";r=<left>;t=<s>`. */
  private headers(
    checks: Array<{ name: string; limit: Limit; id: string }>,
    refused?: { name: string; retryAfterMs: number },
  ): RateLimitHeaders {
    const now = this.now();
    const policy: string[] = [];
    const state: string[] = [];
    for (const c of checks) {
      const shards = shardsFor(c.limit);
      const cell = cellOf(c.limit, shards);
      const b = this.buckets.get(`${c.id}@${c.limit.rps}/${c.limit.burst}`);
      const window = Math.max(1, Math.ceil(c.limit.burst / c.limit.rps));
      policy.push(`"${c.name}";q=${Math.floor(c.limit.burst)};w=${window}`);
      if (refused?.name === c.name) {
        state.push(`"${c.name}";r=0;t=${Math.max(1, Math.ceil(refused.retryAfterMs / 1000))}`);
        continue;
      }
      // Remaining: this container's leased tokens plus the last seen shard's room, scaled to all shards.
      const tat = b?.tat ?? 0;
      const shardRoom = Math.min(c.limit.burst / shards, Math.max(0, (now + cell.capacityMs - tat) / cell.intervalMs));
      const remaining = Math.min(Math.floor(c.limit.burst), Math.floor((b?.tokens ?? 0) + shardRoom * shards));
      state.push(`"${c.name}";r=${remaining};t=${Math.max(0, Math.ceil((tat - now) / 1000))}`);
    }
    return { 'RateLimit-Policy': policy.join(', '), RateLimit: state.join(', ') };
  }

  private limitsOf(tenantId: string): Promise<EffectiveLimits> {
    const now = this.now();
    const cached = this.limits.get(tenantId);
    if (cached && now - cached.at < (this.opts.configTtlMs ?? 10_000)) return cached.value;
    const value = withDbMetrics(limiterDbMetrics(), async () =>
      readTenantLimits(await this.opts.db(tenantId), this.opts.tableName(), tenantId),
    )
      .catch((err) => {
        logger.warn('rate limits unreadable, defaults apply', { error: String(err) });
        return undefined;
      })
      .then((stored) => effectiveLimits(this.opts.defaults(), stored));
    this.limits.set(tenantId, { value, at: now });
    if (this.limits.size > 10_000) this.limits.delete(this.limits.keys().next().value!);
    return value;
  }
}

const envNumber = (name: string): number | undefined => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
};

/**
 * Service defaults from the environment: TENANT_RATE_LIMIT_RPS (0: no default limit; an operator-set limit of a
 * tenant still applies), TENANT_RATE_LIMIT_BURST, USER_RATE_LIMIT_RPS / USER_RATE_LIMIT_BURST (default half).
 */
export const limitDefaultsFromEnv = () => ({
  rps: envNumber('TENANT_RATE_LIMIT_RPS') ?? 50,
  burst: Math.max(1, envNumber('TENANT_RATE_LIMIT_BURST') ?? 200),
  userRps: envNumber('USER_RATE_LIMIT_RPS'),
  userBurst: envNumber('USER_RATE_LIMIT_BURST'),
});

/** The failed-credential budget's limits (contract section 19); an absent one is off. */
export interface FailedCredentialLimits {
  /** Failures per client id (a service account's `client_id`, a push source). */
  client?: Limit;
  /** Failures naming one tenant, whatever the client id. */
  tenant?: Limit;
  /** Failures naming a tenant no credential was proved for in this container yet, all such tenants together (in memory). */
  unproved?: Limit;
}

const limitOf = (rps: number, burst: number): Limit | undefined => (rps > 0 ? { rps, burst: Math.max(1, burst) } : undefined);

/**
 * The failed-credential budget's limits from the environment (`<NAME>_RPS`, `<NAME>_BURST`; an rps of 0 turns a
 * bucket off): FAILED_CREDENTIAL_CLIENT_* (default 10, then one a minute), FAILED_CREDENTIAL_TENANT_* (default 20,
 * then one every 5 s) and FAILED_CREDENTIAL_UNPROVED_* (default 20, then one a second, per container).
 */
export const failedCredentialLimitsFromEnv = (): FailedCredentialLimits => ({
  client: limitOf(envNumber('FAILED_CREDENTIAL_CLIENT_RPS') ?? 1 / 60, envNumber('FAILED_CREDENTIAL_CLIENT_BURST') ?? 10),
  tenant: limitOf(envNumber('FAILED_CREDENTIAL_TENANT_RPS') ?? 0.2, envNumber('FAILED_CREDENTIAL_TENANT_BURST') ?? 20),
  unproved: limitOf(envNumber('FAILED_CREDENTIAL_UNPROVED_RPS') ?? 1, envNumber('FAILED_CREDENTIAL_UNPROVED_BURST') ?? 20),
});
