import { DEFAULT_WEBHOOK_TIMEOUT_MS, supportIssueHandler } from '#shared/domain/integrations/support.ts';
import { logger } from '#shared/logger.ts';

/**
 * Consumer of the support-issues queue: files each connector request with the external support tool
 * through its webhook (SUPPORT_WEBHOOK_URL). Unset means no tool is configured: messages are acknowledged
 * without a call (the connector request itself is already stored). No table access, no e-mail.
 * The environment is read per batch, not at cold start, so tests can point one process at a test server.
 */
export const handler = supportIssueHandler({
  webhookUrl: () => process.env.SUPPORT_WEBHOOK_URL || undefined,
  timeoutMs: () => Number(process.env.SUPPORT_WEBHOOK_TIMEOUT_MS) || DEFAULT_WEBHOOK_TIMEOUT_MS,
  log: logger,
});
