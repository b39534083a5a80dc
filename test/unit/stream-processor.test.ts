import type { DynamoDBRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import type { Log } from '#shared/logger.ts';
import { streamProcessor } from '#shared/stream/processor.ts';

/**
 * The change stream's processor answers each batch with that batch's failed records (partial batch response),
 * also while batches of one handler run at once, as the local poller's lanes deliver them.
 */
const T = '00000000-0000-4000-8000-000000000001';
const record = (seq: number): DynamoDBRecord => ({
  eventID: `e${seq}`,
  eventName: 'MODIFY',
  dynamodb: {
    SequenceNumber: String(seq).padStart(21, '0'),
    Keys: { PK: { S: `T#${T}#goal#g${seq}` }, SK: { S: '#' } },
    NewImage: { kind: { S: 'goal' } },
  },
});
const quiet: Log = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined } as unknown as Log;

describe('the stream processor under concurrent batches', () => {
  it("reports each batch's own failed record, none in the other's answer", async () => {
    // record 2 of batch A fails only once batch B has started; B's records all pass
    let bStarted!: () => void;
    const started = new Promise<void>((r) => (bStarted = r));
    const handler = streamProcessor({
      data: async () => ({ tenantId: T }) as DataCtx,
      log: quiet,
      projections: [
        {
          name: 'probe',
          accepts: () => true,
          async reads(change) {
            if (change.eventId === 'e11') bStarted();
            if (change.eventId === 'e2') {
              await started;
              throw new Error('injected');
            }
          },
          project: () => ({}),
        },
      ],
    });
    const [a, b] = await Promise.all([
      handler({ Records: [record(1), record(2), record(3)] }),
      handler({ Records: [record(11), record(12)] }),
    ]);
    expect(a.batchItemFailures).toEqual([{ itemIdentifier: record(2).dynamodb!.SequenceNumber }]);
    expect(b.batchItemFailures).toEqual([]);
  });
});
