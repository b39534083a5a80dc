import { config } from '#shared/config.ts';
import { limiterKeys } from '#shared/db/rate-limit-store.ts';
import { tenantDb } from '#shared/db/tenant-scope.ts';
import { RateLimitedError } from '#shared/errors.ts';
import {
  failedCredentialLimitsFromEnv,
  RateLimiter,
  type Bucket,
  type FailedCredentialLimits,
  type Limit,
} from '#shared/http/rate-limit.ts';
import { logger } from '#shared/logger.ts';

/**
 * What an anonymous request names before its credential is checked: the tenant (from the client id or the push
 * secret) and the client id in it (`sa_<account>` at the token endpoint, `ds_<source>` at the push route).
 */
export interface Named {
  tenantId: string;
  client: string;
}

/** A token bucket in this container's memory (GCRA: the theoretical arrival time, in ms). */
class MemoryBucket {
  private tat = 0;

  /** The ms until a token, or undefined when one is there; `take`: and take it. */
  next(limit: Limit, now: number, take: boolean): number | undefined {
    const interval = 1000 / limit.rps;
    const after = Math.max(this.tat, now) + interval;
    const over = after - now - limit.burst * interval;
    if (over > 0) return over;
    if (take) this.tat = after;
    return undefined;
  }
}

export interface CredentialBudgetOptions {
  /** A limiter of its own (its leases and refusals kept apart from the tenants' request buckets). */
  limiter: RateLimiter;
  limits: () => FailedCredentialLimits;
  now?: () => number;
  /** How long this container remembers a client id, and its tenant, as proved. */
  provedMs?: number;
}

/**
 * The failed-credential budget (contract section 19) of the doors whose credential names its tenant before it is
 * checked: POST /oauth/token (a service account's client id) and the push route (the push secret). A request
 * that has not proved its credential spends no tenant's or user's budget; each failure spends this one instead:
 *  - per client id, in the table under the tenant named (`T#<t>#rl#fail#client#<id>#<shard>`), across every
 *    container, as the request limiter's buckets are (shared/http/rate-limit.ts, leased the same way);
 *  - per tenant named, likewise (`T#<t>#rl#fail#tenant#<shard>`), for failures of client ids this container has
 *    not seen proved: a flood of made-up client ids naming a tenant is throttled, while its clients that proved
 *    their secret here are limited by their own budget only;
 *  - per container, in memory, for failures naming a tenant no credential was proved for here: made-up tenant
 *    ids each cost a tenant session (STS, deployed) and a lookup, so they are bounded before either.
 * `check` runs before the credential's work (a tenant session, a read, scrypt) and refuses what this container
 * already knows is spent, without a round trip; `failed` charges a failure and refuses it when it was past the
 * budget; `proved` marks the client id and its tenant as proved. Refusals are 429 with Retry-After.
 *
 * A correct secret is refused too while its client id's budget is spent: telling it apart costs the check the
 * budget exists to bound, and answering a right guess differently from a wrong one past the budget would let
 * guessing go on unthrottled. The budget refills (a token suffices for a correct secret, which spends none), so
 * the client waits at most one refill interval once the failures stop (docs/architecture.md, "Safe retries and limits").
 */
export class CredentialBudget {
  private readonly provedUntil = new Map<string, number>();
  private readonly unproved = new MemoryBucket();
  private readonly now: () => number;

  constructor(private readonly opts: CredentialBudgetOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Before the credential is checked: throws 429 when this container knows a budget of what the request names is spent. */
  check(named: Named): void {
    const { table, unproved } = this.bucketsOf(named);
    for (const b of table) {
      const ms = this.opts.limiter.knownRefusal(b);
      if (ms !== undefined) throw new RateLimitedError(ms / 1000);
    }
    const ms = unproved && this.unproved.next(unproved, this.now(), false);
    if (ms !== undefined) throw new RateLimitedError(ms / 1000);
  }

  /** After a credential failed: charges the failure; throws 429 when it was past the budget (the answer then is 429, not 401). */
  async failed(named: Named): Promise<void> {
    const { table, unproved } = this.bucketsOf(named);
    const ms = unproved && this.unproved.next(unproved, this.now(), true);
    const refusal = ms !== undefined ? { name: 'unproved', retryAfterMs: ms } : await this.opts.limiter.spend(named.tenantId, table);
    if (!refusal) return;
    // at most one a container per bucket and refusal: later ones are refused by `check`, without a line each
    logger.warn('failed credentials past their budget', { tenant_uuid: named.tenantId, client: named.client, bucket: refusal.name });
    throw new RateLimitedError(refusal.retryAfterMs / 1000);
  }

  /** The credential was proved: the client id and its tenant are known here (see the class). */
  proved(named: Named): void {
    this.remember(`client:${named.tenantId}/${named.client}`);
    this.remember(`tenant:${named.tenantId}`);
  }

  private bucketsOf(named: Named): { table: Bucket[]; unproved?: Limit } {
    const limits = this.opts.limits();
    const { tenantId, client } = named;
    const table: Bucket[] = [];
    if (limits.client)
      table.push({
        name: 'client',
        id: `fail:${tenantId}/${client}`,
        limit: limits.client,
        key: (s) => limiterKeys.failedClientShard(tenantId, client, s),
      });
    if (limits.tenant && !this.isProved(`client:${tenantId}/${client}`))
      table.push({ name: 'tenant', id: `fail:${tenantId}`, limit: limits.tenant, key: (s) => limiterKeys.failedTenantShard(tenantId, s) });
    return { table, unproved: this.isProved(`tenant:${tenantId}`) ? undefined : limits.unproved };
  }

  private isProved(key: string): boolean {
    const until = this.provedUntil.get(key);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.provedUntil.delete(key);
    return false;
  }

  private remember(key: string): void {
    this.provedUntil.delete(key); // re-inserted last: the oldest go first when the map is full
    this.provedUntil.set(key, this.now() + (this.opts.provedMs ?? 3_600_000));
    if (this.provedUntil.size > 10_000) this.provedUntil.delete(this.provedUntil.keys().next().value!);
  }
}

/** The container's failed-credential budget, on a limiter of its own (its limits from the environment). */
export const credentialBudget = new CredentialBudget({
  limiter: new RateLimiter({ db: tenantDb, tableName: () => config.tableName, defaults: () => ({ rps: 0, burst: 1 }) }),
  limits: failedCredentialLimitsFromEnv,
});
