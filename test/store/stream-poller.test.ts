import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { ENTITY_SK } from '#shared/db/keys.ts';
import { streamProcessorRow } from '#shared/routes/stream.ts';
import { LIMITER_SK } from '#shared/db/rate-limit-store.ts';
import { IDEMPOTENCY_SK } from '#shared/db/idempotency-store.ts';
import { ensureTable } from '../../scripts/lib/dynamodb-local.ts';
import { StreamPoller } from '../../scripts/lib/stream-poller.ts';

/**
 * The local poller drops what the stream processor's event filter drops in AWS (infra/stack.ts): only entity
 * items are delivered; the rest take no room in a batch, and the checkpoint moves past them.
 */
describe('local stream poller', () => {
  it('delivers entity items, neither rate-limiter buckets nor idempotency records', () => {
    expect(streamProcessorRow.sortKeys).toEqual([ENTITY_SK]);
    for (const sk of [LIMITER_SK, IDEMPOTENCY_SK]) expect(streamProcessorRow.sortKeys).not.toContain(sk);
  });

  it('delivers every other record in order, and checkpoints past the dropped ones', async () => {
    const endpoint = process.env.DYNAMODB_ENDPOINT!;
    const tableName = `poller-${randomUUID().slice(0, 8)}`;
    const streamArn = await ensureTable(endpoint, tableName);
    const db = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
    );
    const sortKeys = ['#', LIMITER_SK, 'RM#status', IDEMPOTENCY_SK, '#', LIMITER_SK, LIMITER_SK];
    for (const [i, SK] of sortKeys.entries()) await db.send(new PutCommand({ TableName: tableName, Item: { PK: `T#x#item#${i}`, SK } }));
    const dir = mkdtempSync(join(tmpdir(), 'poller-'));
    let lastDelivered = 0n;
    const run = async () => {
      const delivered: string[] = [];
      const poller = new StreamPoller({
        endpoint,
        streamArn,
        checkpointFile: join(dir, 'checkpoint.json'),
        deadLetterFile: join(dir, 'dead.jsonl'),
        batchSize: 3,
        skip: (r) => !streamProcessorRow.sortKeys.includes(r.dynamodb?.Keys?.SK?.S ?? ''),
        handler: async () => async (event: DynamoDBStreamEvent) => {
          delivered.push(...event.Records.map((r) => `${r.dynamodb!.Keys!.PK!.S} ${r.dynamodb!.Keys!.SK!.S}`));
          lastDelivered = BigInt(event.Records.at(-1)!.dynamodb!.SequenceNumber!);
        },
      });
      poller.start();
      await poller.whenIdle();
      await poller.stop();
      return delivered;
    };
    expect(await run()).toEqual(['T#x#item#0 #', 'T#x#item#4 #']);
    // the trailing dropped records were checkpointed too (past the last one delivered): a restart finds nothing left
    const checkpoint = JSON.parse(readFileSync(join(dir, 'checkpoint.json'), 'utf8')) as { shards: Record<string, { after: string }> };
    expect(Object.values(checkpoint.shards).some((s) => BigInt(s.after) > lastDelivered)).toBe(true);
    expect(await run()).toEqual([]);
    db.destroy();
  });

  it('hands batches of different items to the processor at once, each item in order, and retries a failed record without holding the rest', async () => {
    const endpoint = process.env.DYNAMODB_ENDPOINT!;
    const tableName = `poller-${randomUUID().slice(0, 8)}`;
    const streamArn = await ensureTable(endpoint, tableName);
    const db = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
    );
    // 40 items, 5 versions each, written interleaved (as 40 clients would)
    for (let v = 1; v <= 5; v++)
      await Promise.all(
        Array.from({ length: 40 }, (_, i) => db.send(new PutCommand({ TableName: tableName, Item: { PK: `T#x#item#${i}`, SK: '#', v } }))),
      );
    const dir = mkdtempSync(join(tmpdir(), 'poller-'));
    const applied = new Map<string, number[]>();
    let active = 0;
    let peak = 0;
    let failures = 0;
    let doneWhenRetried = -1;
    const poller = new StreamPoller({
      endpoint,
      streamArn,
      checkpointFile: join(dir, 'checkpoint.json'),
      deadLetterFile: join(dir, 'dead.jsonl'),
      batchSize: 10,
      maxAttempts: 3,
      handler: async () => async (event: DynamoDBStreamEvent) => {
        peak = Math.max(peak, ++active);
        try {
          for (const [i, r] of event.Records.entries()) {
            const pk = r.dynamodb!.Keys!.PK!.S!;
            const v = Number(r.dynamodb!.NewImage!.v!.N);
            // item 7's third version fails twice: the partial batch response names it and every later record
            if (pk === 'T#x#item#7' && v === 3 && failures < 2) {
              failures++;
              return { batchItemFailures: event.Records.slice(i).map((x) => ({ itemIdentifier: x.dynamodb!.SequenceNumber! })) };
            }
            await new Promise((ok) => setImmediate(ok)); // the other lanes' batches run meanwhile
            if (pk === 'T#x#item#7' && v === 3) doneWhenRetried = [...applied.values()].filter((a) => a.length === 5).length;
            applied.set(pk, [...(applied.get(pk) ?? []), v]);
          }
          return { batchItemFailures: [] };
        } finally {
          active--;
        }
      },
    });
    poller.start();
    await poller.whenIdle();
    await poller.stop();
    db.destroy();
    expect(failures).toBe(2);
    expect(applied.size).toBe(40);
    for (const [pk, versions] of applied) expect(versions, pk).toEqual([1, 2, 3, 4, 5]);
    expect(peak).toBeGreaterThan(1); // batches at once (one at a time before)
    // The 30 items of the other three lanes (40 new keys dealt to 4 lanes, 10 each) were done while item 7
    // waited for its retries (back-offs of 200 and 400 ms); only its own lane waited, as with the mapping.
    expect(doneWhenRetried).toBeGreaterThanOrEqual(30);
    expect(readFileSync(join(dir, 'checkpoint.json'), 'utf8')).toContain(streamArn);
  });
});
