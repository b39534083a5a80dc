import { tenantDb } from '#shared/db/tenant-scope.ts';
import { accessRequestEmailHandler, storeInbox } from '#shared/domain/sharing/mail.ts';
import { sendEmail } from '#shared/email/mailer.ts';
import { logger } from '#shared/logger.ts';

/**
 * Consumer of the access-request-notifications queue: e-mails the owner and managers named in each message
 * (in-app notices were already written with the request). Each tenant's data through its confined client.
 */
export const handler = accessRequestEmailHandler({
  inbox: async (tenantId) => storeInbox({ tenantId, db: await tenantDb(tenantId) }),
  send: sendEmail,
  log: logger,
});
