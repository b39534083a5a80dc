import { Logger } from '@aws-lambda-powertools/logger';

/** One logger per container; each request logs through a child carrying its request id. */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'goal-tracking', logLevel: (process.env.LOG_LEVEL as 'INFO') ?? 'INFO' });

export type Log = Logger;
