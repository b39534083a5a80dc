import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DynamoDBRecord } from 'aws-lambda';
import { baseDb } from '#shared/db/client.ts';
import { logger } from '#shared/logger.ts';
import { installLocalQueues, MessageFiles, type DeadLetter, type LocalQueues } from '#shared/queue/queue.ts';
import { streamProcessor } from '#shared/stream/processor.ts';
import { projections } from '#shared/stream/projections.ts';

import { STREAM_DEAD_LETTER_QUEUE } from './stream-poller.ts';

/**
 * `npm run admin -- redrive` on the local stack: every dead letter in DATA_DIR/dead-letters.jsonl goes back
 * to work. A queue message becomes a new message of its queue (a file in DATA_DIR/queues/<queue>/incoming, which the
 * running stack's worker picks up at its next poll); a change-stream record is applied again by the stream
 * processor in this process (projections are idempotent, so a record that did apply meanwhile changes
 * nothing), its e-mails queued the same way. Redriven letters move to dead-letters.redriven.jsonl; a stream
 * record that fails again stays in the store.
 */
export async function redriveLocal(dataDir: string): Promise<{ requeued: number; reapplied: number; still_failing: number }> {
  const file = join(dataDir, 'dead-letters.jsonl');
  if (!existsSync(file)) return { requeued: 0, reapplied: 0, still_failing: 0 };
  const letters = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as DeadLetter);
  const files = new MessageFiles(join(dataDir, 'queues'));
  const send = async (queue: string, body: unknown) => {
    const id = randomUUID();
    files.submit(queue, { id, body: JSON.stringify(body), receiveCount: 0, visibleAt: Date.now(), sentAt: Date.now() });
    return id;
  };
  installLocalQueues({ send } as unknown as LocalQueues);
  const process = streamProcessor({ projections, data: async (tenantId) => ({ tenantId, db: baseDb() }), log: logger });
  let requeued = 0;
  let reapplied = 0;
  const kept: DeadLetter[] = [];
  for (const letter of letters) {
    if (letter.queue !== STREAM_DEAD_LETTER_QUEUE) {
      await send(letter.queue, letter.body);
      requeued++;
      continue;
    }
    const failed = await process({ Records: [letter.body as DynamoDBRecord] }).then(
      (r) => r.batchItemFailures.length > 0,
      () => true,
    );
    if (failed) kept.push(letter);
    else reapplied++;
  }
  const done = letters.filter((l) => !kept.includes(l));
  if (done.length)
    appendFileSync(
      join(dataDir, 'dead-letters.redriven.jsonl'),
      done.map((l) => `${JSON.stringify({ ...l, redriven_at: new Date().toISOString() })}\n`).join(''),
    );
  writeFileSync(file, kept.map((l) => `${JSON.stringify(l)}\n`).join(''));
  return { requeued, reapplied, still_failing: kept.length };
}
