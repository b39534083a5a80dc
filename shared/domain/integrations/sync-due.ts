import { keys } from '#shared/db/keys.ts';
import type { WriteTx } from '#shared/db/write-tx.ts';
import type { DataSourceRecord } from '#shared/domain/integrations/entity.ts';

/**
 * The schedule's index: one due item per scheduled source, beside the source (`T#<t>#data_source#<id>`, SK
 * `DUE`), so tenant sessions write it in the source's own transactions. Its GSI1 keys put it in one of
 * DUE_SHARDS sweep partitions (`SYNCDUE#<n>`, sorted by due time): the sweep reads what is due with one Query
 * per shard (`GSI1SK <= now`), never a Scan, and sees only tenant, source and due time. The partition is the
 * one GSI1 key outside a tenant's prefix; only the sweep's own grant reads it (docs/deploy.md).
 */
export const DUE_SHARDS = 16;
export const DUE_SK = 'DUE';
/** The due partitions' common prefix: the sweep's IAM grant is LeadingKeys `SYNCDUE#*` on GSI1. */
export const duePartitionPrefix = 'SYNCDUE#';
export const duePartition = (shard: number) => `${duePartitionPrefix}${shard}`;
export const dueKey = (tenantId: string, sourceUuid: string) => keys.misc(tenantId, 'data_source', sourceUuid, DUE_SK);
const shardOf = (uuid: string) => parseInt(uuid.slice(-1), 16) % DUE_SHARDS || 0;

/** `<due>#<tenant>#<source>`: sorted by due time, and naming what to sync. */
export const dueSortKey = (due: string, tenantId: string, sourceUuid: string) => `${due}#${tenantId}#${sourceUuid}`;

export function parseDueSortKey(sk: string): { due: string; tenantId: string; sourceUuid: string } | undefined {
  const [due, tenantId, sourceUuid] = sk.split('#');
  return due && tenantId && sourceUuid ? { due, tenantId, sourceUuid } : undefined;
}

/** Puts the source's due item at its next_run_at (the caller checked there is one). */
export function addDueItem(tx: WriteTx, tenantId: string, source: DataSourceRecord): void {
  tx.putSide(dueKey(tenantId, source.uuid), {
    kind: 'data_source_due',
    GSI1PK: duePartition(shardOf(source.uuid)),
    GSI1SK: dueSortKey(source.next_run_at!, tenantId, source.uuid),
  });
}

/** The due item follows the source: put at its next run, or removed when it has none (paused, deleted, not synced). */
export function syncDueItem(tx: WriteTx, tenantId: string, source: DataSourceRecord | undefined, uuid: string): void {
  if (source?.next_run_at) addDueItem(tx, tenantId, source);
  else tx.deleteSide(dueKey(tenantId, uuid));
}
