import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';

/** One e-mail as the local stack's workers write it to DATA_DIR/outbox (shared/email/mailer.ts). */
export interface OutboxEmail {
  to: string[];
  subject: string;
  text: string;
  from: string;
  sent_at: string;
}

/**
 * Every e-mail in the local stack's outbox. The mailer writes each aside and renames it into place, so a
 * `.json` file is always whole; the outbox exists only once the run's first e-mail went out.
 */
export function outboxEmails(): OutboxEmail[] {
  const dir = join(inject('dataDir'), 'outbox');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as OutboxEmail);
}
