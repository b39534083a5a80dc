import { Logger } from '@aws-lambda-powertools/logger';
import type { LogAttributes, LogItemMessage } from '@aws-lambda-powertools/logger/types';

/** One logger per container. */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'goal-tracking', logLevel: (process.env.LOG_LEVEL as 'INFO') ?? 'INFO' });

/** What code logs through: the container's logger, or a request's view of it (`withKeys`). */
export type Log = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;

/**
 * The container's logger with `keys` on every line (a request's id, tenant, user). Not `createChild`: that
 * builds a whole Logger (and a Console) per request, a tenth of a GET's CPU in the load run; and not
 * `appendKeys` on the shared logger, which concurrent requests of the local stack would mix up.
 */
export function withKeys(keys: LogAttributes, base: Log = logger): Log {
  // the keys ride on the message (a message may be an object with `message`): the extra input stays as given,
  // so an Error passed there is still formatted as one
  const keyed = (message: LogItemMessage): LogItemMessage => (typeof message === 'string' ? { ...keys, message } : { ...keys, ...message });
  return {
    debug: (message, ...extra) => base.debug(keyed(message), ...extra),
    info: (message, ...extra) => base.info(keyed(message), ...extra),
    warn: (message, ...extra) => base.warn(keyed(message), ...extra),
    error: (message, ...extra) => base.error(keyed(message), ...extra),
  };
}
