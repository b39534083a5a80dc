import { randomUUID } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SESv2Client } from '@aws-sdk/client-sesv2';

/** E-mail goes out only from workers. Locally it lands in EMAIL_OUTBOX_DIR as one JSON file per message. */
export interface Email {
  to: string[];
  subject: string;
  text: string;
}

// The SES client (shared/email/ses.ts) is imported with the first e-mail, not at cold start.
let ses: Promise<{ client: SESv2Client; SendEmailCommand: typeof import('#shared/email/ses.ts').SendEmailCommand }> | undefined;
const sesSdk = () =>
  (ses ??= import('#shared/email/ses.ts').then((m) => ({ client: new m.SESv2Client({}), SendEmailCommand: m.SendEmailCommand })));

export async function sendEmail(email: Email): Promise<string> {
  const outbox = process.env.EMAIL_OUTBOX_DIR;
  if (outbox) {
    mkdirSync(outbox, { recursive: true });
    const id = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomUUID()}`;
    // written aside, then renamed: a reader of the outbox never sees half a message
    const partial = join(outbox, `.${id}.partial`);
    writeFileSync(
      partial,
      JSON.stringify({ ...email, from: process.env.EMAIL_FROM ?? 'noreply@localhost', sent_at: new Date().toISOString() }, null, 2),
    );
    renameSync(partial, join(outbox, `${id}.json`));
    return id;
  }
  const from = process.env.EMAIL_FROM;
  if (!from) throw new Error('Missing required environment variable EMAIL_FROM');
  const { client, SendEmailCommand } = await sesSdk();
  const out = await client.send(
    new SendEmailCommand({
      FromEmailAddress: from,
      Destination: { ToAddresses: email.to },
      ConfigurationSetName: process.env.SES_CONFIGURATION_SET,
      Content: { Simple: { Subject: { Data: email.subject }, Body: { Text: { Data: email.text } } } },
    }),
  );
  return out.MessageId!;
}
