import { RateLimitedError } from '#shared/errors.ts';

/**
 * Per-tenant token bucket, kept in the container's memory. It needs no DynamoDB write per request (a shared
 * counter item would be a hot key carrying the tenant's whole traffic), at the price of being per container:
 * the effective tenant limit in AWS is this rate times the number of warm containers of a function, under the
 * stage-wide API Gateway throttle. Configured with TENANT_RATE_LIMIT_RPS / TENANT_RATE_LIMIT_BURST; a rate of 0 turns it off (a burst below 1 would refuse everything, so it is at least 1).
 */
export class TenantRateLimiter {
  private buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes one token for the tenant or throws 429 with the seconds until one is available. */
  take(tenantId: string): void {
    if (this.ratePerSecond <= 0) return;
    const t = this.now();
    const b = this.buckets.get(tenantId) ?? { tokens: this.burst, at: t };
    b.tokens = Math.min(this.burst, b.tokens + ((t - b.at) / 1000) * this.ratePerSecond);
    b.at = t;
    if (b.tokens < 1) {
      this.buckets.set(tenantId, b);
      throw new RateLimitedError((1 - b.tokens) / this.ratePerSecond);
    }
    b.tokens -= 1;
    this.buckets.set(tenantId, b);
    if (this.buckets.size > 10_000) this.buckets.delete(this.buckets.keys().next().value!); // bound memory
  }
}

export const tenantRateLimiter = new TenantRateLimiter(Number(process.env.TENANT_RATE_LIMIT_RPS ?? 50), Math.max(1, Number(process.env.TENANT_RATE_LIMIT_BURST ?? 200)));
