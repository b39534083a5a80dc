import { ACCESS_REQUEST_QUEUE } from '#shared/domain/sharing/mail.ts';
import type { Worker } from '#shared/routes/types.ts';

/** Queue consumers. Each queue gets a dead-letter queue after `maxReceiveCount` receives. */
export const workers: Worker[] = [
  // Access request e-mails to owners and managers. Writes: each notification's email_sent_at (idempotency marker).
  { queue: ACCESS_REQUEST_QUEUE, handler: 'functions/workers/access-request-notify.ts', maxReceiveCount: 5, batchSize: 10, timeoutSeconds: 30, table: 'write', sendsEmail: true },
];
