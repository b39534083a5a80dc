/**
 * Delivery settings, read from the environment when needed. The defaults are the contract's; the local
 * stack and the tests shorten them (a receiver that never answers must end `failed` in seconds, not a day).
 */

/** Standard Webhooks' schedule: after the first attempt, retries 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h later (about a day). */
export const DEFAULT_RETRY_SCHEDULE_SECONDS = [5, 300, 1800, 7200, 18000, 36000, 36000];

function numbers(name: string): number[] | undefined {
  const raw = process.env[name];
  if (!raw) return undefined;
  const list = raw.split(',').map((s) => Number(s.trim()));
  if (list.some((n) => !Number.isFinite(n) || n < 0)) throw new Error(`${name} must be comma-separated non-negative seconds`);
  return list;
}

function positive(name: string, fallback: number): number {
  const n = Number(process.env[name]);
  return process.env[name] && Number.isFinite(n) && n > 0 ? n : fallback;
}

export const webhookSettings = {
  /** Delays (seconds) before each retry; its length is the number of retries after the first attempt. */
  get retrySchedule(): number[] {
    return numbers('WEBHOOK_RETRY_SCHEDULE') ?? DEFAULT_RETRY_SCHEDULE_SECONDS;
  },
  /** A receiver must answer within this (contract: 10 s). */
  get timeoutMs(): number {
    return positive('WEBHOOK_TIMEOUT_MS', 10_000);
  },
  /** An endpoint whose attempts have all failed for this long is disabled (24 h). */
  get disableAfterMs(): number {
    return positive('WEBHOOK_DISABLE_AFTER_SECONDS', 24 * 3600) * 1000;
  },
  /** How much of a receiver's answer is read (for `last_error`); the rest is discarded. */
  responseBodyCap: 4096,
};
