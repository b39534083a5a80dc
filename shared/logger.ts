import { Logger } from '@aws-lambda-powertools/logger';
import type { LogAttributes, LogItemExtraInput, LogItemMessage } from '@aws-lambda-powertools/logger/types';

/** One logger per container. */
export const logger = new Logger({
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'goal-tracking',
  logLevel: (process.env.LOG_LEVEL as 'INFO') ?? 'INFO',
});

/** What code logs through: the container's logger, or a request's view of it (`withKeys`). */
export type Log = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;

/**
 * The container's logger with `keys` on every line (a request's id, tenant, user). Not `createChild`: that
 * builds a whole Logger (and a Console) per request, a tenth of a GET's CPU in the load run; and not
 * `appendKeys` on the shared logger, which concurrent requests of the local stack would mix up. A class, so a
 * request's view is one small object rather than four closures.
 */
export function withKeys(keys: LogAttributes, base: Log = logger): Log {
  return new KeyedLog(keys, base);
}

class KeyedLog implements Log {
  constructor(
    private readonly keys: LogAttributes,
    private readonly base: Log,
  ) {}

  // the keys ride on the message (a message may be an object with `message`): the extra input stays as given,
  // so an Error passed there is still formatted as one
  private keyed(message: LogItemMessage): LogItemMessage {
    return typeof message === 'string' ? { ...this.keys, message } : { ...this.keys, ...message };
  }

  debug(message: LogItemMessage, ...extra: LogItemExtraInput): void {
    this.base.debug(this.keyed(message), ...extra);
  }

  info(message: LogItemMessage, ...extra: LogItemExtraInput): void {
    this.base.info(this.keyed(message), ...extra);
  }

  warn(message: LogItemMessage, ...extra: LogItemExtraInput): void {
    this.base.warn(this.keyed(message), ...extra);
  }

  error(message: LogItemMessage, ...extra: LogItemExtraInput): void {
    this.base.error(this.keyed(message), ...extra);
  }
}
