import { describe, expect, it } from 'vitest';
import { RateLimitedError } from '#shared/errors.ts';
import { TenantRateLimiter } from '#shared/http/rate-limit.ts';

describe('per-tenant rate limiter', () => {
  it('allows the burst, then refuses with 429 and a Retry-After, and refills over time; tenants are independent', () => {
    let now = 0;
    const limiter = new TenantRateLimiter(2, 3, () => now);
    for (let i = 0; i < 3; i++) limiter.take('a');
    let err: unknown;
    try {
      limiter.take('a');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).status).toBe(429);
    expect((err as RateLimitedError).headers['Retry-After']).toBe('1');
    limiter.take('b'); // another tenant is not affected
    now += 500; // one token back at 2/s
    limiter.take('a');
    expect(() => limiter.take('a')).toThrow(RateLimitedError);
  });

  it('is off at rate 0', () => {
    const limiter = new TenantRateLimiter(0, 0);
    for (let i = 0; i < 1000; i++) limiter.take('a');
  });
});
