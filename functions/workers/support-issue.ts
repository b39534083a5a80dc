import { DEFAULT_WEBHOOK_TIMEOUT_MS, fileSupportIssue, type SupportWebhookDeps } from '#shared/domain/integrations/support.ts';
import { logger } from '#shared/logger.ts';
import type { WorkerHandler } from '#shared/queue/queue.ts';
import { batchHandler } from '#functions/workers/batch.ts';

/** The worker over any webhook settings and fetch (a test server in tests); `handler` below is the deployed one. */
export const supportIssueHandler = (deps: SupportWebhookDeps): WorkerHandler =>
  // Records are independent and sent concurrently: a batch of 10 slow calls must fit the worker's timeout.
  batchHandler({
    name: 'support issue',
    schema: () => import('#shared/schemas/messages/support-issue.ts').then((m) => m.SupportIssueMessageSchema),
    concurrent: true,
    log: deps.log,
    process: (msg) => fileSupportIssue(msg, deps),
  });

/**
 * Consumer of the support-issues queue: files each connector request with the external support tool
 * through its webhook (SUPPORT_WEBHOOK_URL). Unset means no tool is configured: messages are acknowledged
 * without a call (the connector request itself is already stored). No table access, no e-mail.
 * The environment is read per message, not at cold start, so tests can point one process at a test server.
 */
export const handler = supportIssueHandler({
  webhookUrl: () => process.env.SUPPORT_WEBHOOK_URL || undefined,
  timeoutMs: () => Number(process.env.SUPPORT_WEBHOOK_TIMEOUT_MS) || DEFAULT_WEBHOOK_TIMEOUT_MS,
  log: logger,
});
