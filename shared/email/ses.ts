/**
 * The SES client and the one command the mailer uses, in a module of their own so that `sendEmail`
 * (shared/email/mailer.ts) imports them with the first e-mail, not at cold start: a dynamic import of the SDK
 * package itself would keep every one of its commands.
 */
export { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
