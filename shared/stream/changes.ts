import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { ENTITY_SK } from '#shared/db/keys.ts';
import type { TableChange } from '#shared/table-change.ts';

const TENANT_PK = /^T#([^#]+)#/;

type Image = Record<string, AttributeValue>;
const image = (i: unknown) => (i ? (unmarshall(i as Image) as Record<string, unknown>) : undefined);

/**
 * A stream record (Lambda's DynamoDB Streams event shape; the local poller builds the same) as a TableChange,
 * or undefined for a record that is not a tenant item's change (every item of the table is; kept defensive).
 */
export function tableChange(record: DynamoDBRecord): TableChange | undefined {
  const d = record.dynamodb;
  const keys = d?.Keys ? (unmarshall(d.Keys as Image) as { PK?: unknown; SK?: unknown }) : undefined;
  if (!record.eventID || !record.eventName || typeof keys?.PK !== 'string' || typeof keys.SK !== 'string') return undefined;
  const tenant = TENANT_PK.exec(keys.PK)?.[1];
  if (!tenant) return undefined;
  const seconds = typeof d!.ApproximateCreationDateTime === 'number' ? d!.ApproximateCreationDateTime : Date.now() / 1000;
  return {
    eventId: record.eventID,
    eventName: record.eventName,
    at: new Date(seconds * 1000).toISOString(),
    tenantId: tenant,
    keys: { PK: keys.PK, SK: keys.SK },
    ...(typeof d!.SequenceNumber === 'string' ? { sequence: d!.SequenceNumber } : {}),
    oldImage: image(d!.OldImage),
    newImage: image(d!.NewImage),
  };
}

/** The entity record (`rec`) of an entity item image of `kind`, or undefined for any other item. */
export function entityRecord<R>(change: TableChange, kind: string, which: 'old' | 'new'): R | undefined {
  if (change.keys.SK !== ENTITY_SK) return undefined;
  const img = which === 'old' ? change.oldImage : change.newImage;
  return img?.kind === kind ? (img.rec as R) : undefined;
}

/** The entity item's version (`v`) in an image. */
export const versionOf = (img: Record<string, unknown> | undefined) => (typeof img?.v === 'number' ? img.v : 0);
