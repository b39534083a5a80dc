import { tenantDb } from '#shared/db/tenant-scope.ts';
import { deliverAccessRequestEmails, storeInbox, type MailDeps } from '#shared/domain/sharing/mail.ts';
import { sendEmail } from '#shared/email/mailer.ts';
import { logger } from '#shared/logger.ts';
import type { WorkerHandler } from '#shared/queue/queue.ts';
import { batchHandler } from '#functions/workers/batch.ts';

/** The worker over any inbox and mailer (fakes in unit tests); `handler` below is the deployed one. */
export const accessRequestNotifyHandler = (deps: MailDeps): WorkerHandler =>
  batchHandler({
    name: 'access request e-mails',
    schema: () => import('#shared/schemas/messages/access-request-email.ts').then((m) => m.AccessRequestEmailMessageSchema),
    log: deps.log,
    process: (msg) => deliverAccessRequestEmails(msg, deps),
  });

/**
 * Consumer of the access-request-notifications queue: e-mails the owner and managers named in each message
 * (in-app notices were already written with the request). Each tenant's data through its confined client.
 */
export const handler = accessRequestNotifyHandler({
  inbox: async (tenantId) => storeInbox({ tenantId, db: await tenantDb(tenantId) }),
  send: sendEmail,
  log: logger,
});
