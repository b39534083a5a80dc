import type { Worker } from '#shared/routes/types.ts';

/** Queue consumers. Each queue gets a dead-letter queue after `maxReceiveCount` receives. */
export const workers: Worker[] = [];
