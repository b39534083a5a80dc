import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';

/** E-mail goes out only from workers. Locally it lands in EMAIL_OUTBOX_DIR as one JSON file per message. */
export interface Email {
  to: string[];
  subject: string;
  text: string;
}

let ses: SESv2Client | undefined;

export async function sendEmail(email: Email): Promise<string> {
  const outbox = process.env.EMAIL_OUTBOX_DIR;
  if (outbox) {
    mkdirSync(outbox, { recursive: true });
    const id = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomUUID()}`;
    writeFileSync(join(outbox, `${id}.json`), JSON.stringify({ ...email, from: process.env.EMAIL_FROM ?? 'noreply@localhost', sent_at: new Date().toISOString() }, null, 2));
    return id;
  }
  const from = process.env.EMAIL_FROM;
  if (!from) throw new Error('Missing required environment variable EMAIL_FROM');
  ses ??= new SESv2Client({});
  const out = await ses.send(
    new SendEmailCommand({
      FromEmailAddress: from,
      Destination: { ToAddresses: email.to },
      ConfigurationSetName: process.env.SES_CONFIGURATION_SET,
      Content: { Simple: { Subject: { Data: email.subject }, Body: { Text: { Data: email.text } } } },
    }),
  );
  return out.MessageId!;
}
