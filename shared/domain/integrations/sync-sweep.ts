import type { Db } from '#shared/db/client.ts';
import { queryUpTo } from '#shared/db/due-index.ts';
import { DATA_SOURCE_SYNC_QUEUE, type SyncMessage } from '#shared/domain/integrations/entity.ts';
import { DUE_SHARDS, duePartition, parseDueSortKey } from '#shared/domain/integrations/sync-due.ts';
import { UUID_RE } from '#shared/ids.ts';
import type { QueueSender } from '#shared/queue/queue.ts';

/**
 * The schedule's sweep (deployed: a function EventBridge runs every minute; locally: the local stack's timer).
 * Reads what is due with one Query per due shard (`GSI1SK <= now`: by key, never a Scan) and puts one message
 * per due source on the sync queue, its run named by the due time. It writes nothing: the worker moves the due
 * item once the run is logged, and drops a message whose due time is no longer the source's (a duplicate from
 * an earlier sweep, or a source paused since), so a sweep that runs twice, or overlaps a slow worker, costs a
 * read, never a second check-in.
 */
export async function sweepDue(db: Db, queue: QueueSender, now: string): Promise<{ queued: number }> {
  let queued = 0;
  // '~' sorts after every character of a timestamp, tenant or uuid: everything due at or before `now`
  const upTo = `${now}~`;
  await Promise.all(
    Array.from({ length: DUE_SHARDS }, async (_, shard) => {
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await queryUpTo(db, duePartition(shard), upTo, startKey);
        for (const sk of page.sortKeys) {
          const due = parseDueSortKey(sk);
          // the tenant becomes a key prefix and a session tag: only a uuid
          if (!due || !UUID_RE.test(due.tenantId) || !UUID_RE.test(due.sourceUuid)) continue;
          const msg: SyncMessage = {
            version: 1,
            tenant_uuid: due.tenantId,
            data_source_uuid: due.sourceUuid,
            run: due.due,
            trigger: 'schedule',
          };
          await queue.send(DATA_SOURCE_SYNC_QUEUE, msg);
          queued++;
        }
        startKey = page.lastKey;
      } while (startKey);
    }),
  );
  return { queued };
}
