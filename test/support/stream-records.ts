import { randomUUID } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';

let seq = 0;

/** A stream record of a change from `oldImage` to `newImage` of one item, as Lambda delivers it (rising sequence numbers). */
export function streamRecord(
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE',
  key: { PK: string; SK: string },
  oldImage?: Record<string, unknown>,
  newImage?: Record<string, unknown>,
): DynamoDBRecord {
  const m = (i?: Record<string, unknown>) =>
    i ? (marshall(i, { removeUndefinedValues: true, convertClassInstanceToMap: true }) as never) : undefined;
  return {
    eventID: randomUUID(),
    eventName,
    eventSource: 'aws:dynamodb',
    dynamodb: {
      ApproximateCreationDateTime: Date.now() / 1000,
      Keys: m(key),
      OldImage: m(oldImage),
      NewImage: m(newImage),
      SequenceNumber: String(++seq).padStart(21, '0'),
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  };
}
