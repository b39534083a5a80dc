import { QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { nowIso } from '#shared/clock.ts';
import { keys, REFERENCE_SK_PREFIX } from '#shared/db/keys.ts';
import type { EntryList } from '#shared/db/entry-lists.ts';
import type { BaseRecord, EntityDef, ListEntry, Stored } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { storable, tableName } from '#shared/db/reads.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { ConcurrentUpdateError, type AppError } from '#shared/errors.ts';

// References that hold under concurrency (docs/data-model.md, "References"); DELETE_MARKER_TTL_MS is in write-tx.ts.

/** One referrer of an entity: a reference entry in the entity's partition. */
export interface ReferenceEntry {
  /** The referring record's id (e.g. a goal's uuid). */
  id: string;
  /** Its list and association, e.g. `objective` / `team`. */
  list: string;
  name: string;
  /** The referrer's lifecycle marker (`discarded`, `archived`), from its envelope. */
  state?: string;
}

/** Every item of an entity's partition whose sort key starts with `prefix`, all pages, strongly consistent. */
async function* partitionItems(ctx: DataCtx, type: string, id: string, prefix: string): AsyncGenerator<Record<string, unknown>> {
  const pk = keys.entity(ctx.tenantId, type, id).PK;
  if (!storable(pk)) return;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await ctx.db.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :rf)',
        ExpressionAttributeValues: { ':pk': pk, ':rf': prefix },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    yield* page.Items ?? [];
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

/** Every reference entry naming an entity, strongly consistent (base-table Query of its partition). */
export async function referencesTo(ctx: DataCtx, type: string, id: string): Promise<ReferenceEntry[]> {
  const out: ReferenceEntry[] = [];
  for await (const i of partitionItems(ctx, type, id, REFERENCE_SK_PREFIX)) {
    const sk = (i.SK as string).slice(REFERENCE_SK_PREFIX.length);
    const at = sk.indexOf('@');
    out.push({
      id: i.id as string,
      list: sk.slice(0, at),
      name: sk.slice(at + 1, sk.lastIndexOf('#')),
      state: i.state as string | undefined,
    });
  }
  return out;
}

/**
 * The entries of one list kept in an entity's partition (EntryList.keptBy or heldBy: `keptEntries(ctx, 'goal',
 * parent, childrenOfGoal)`), strongly consistent, as the list's index rows: every entry committed is there, where
 * the index may lag. In the list's creation order.
 */
export async function keptEntries(ctx: DataCtx, type: string, id: string, of: EntryList): Promise<ListEntry[]> {
  const out: ListEntry[] = [];
  for await (const i of partitionItems(ctx, type, id, `${REFERENCE_SK_PREFIX}${of.list}@${of.name}#`)) {
    out.push({
      id: i.id as string,
      sortKey: i.GSI1SK as string,
      vis: i.vis as string | undefined,
      acl: i.acl as string[] | undefined,
      state: i.state as string | undefined,
    });
  }
  return out.sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0));
}

/**
 * Deletes an entity only if nothing that must keep referring to it does, race-free against writers that add
 * a reference (their transaction carries checkAlive on this entity and puts the reference entry here):
 *  1. mark the entity `deleting_at` (conditioned on the version read; bumps it): from now on every new
 *     reference's transaction fails its checkAlive (and retries);
 *  2. read every reference entry in the entity's partition, strongly consistent: every reference committed
 *     before step 1 is there;
 *  3. references that `blocks` (default: every referrer not discarded): clear the mark, throw `onReferenced`;
 *     none: delete the entity (conditioned on the marked version).
 * A crash between 1 and 3 leaves a mark that stops blocking after DELETE_MARKER_TTL_MS.
 */
export async function removeUnreferenced<R extends BaseRecord>(
  ctx: DataCtx,
  def: EntityDef<R>,
  current: Stored<R>,
  opts: { onReferenced: (refs: ReferenceEntry[]) => AppError; blocks?: (ref: ReferenceEntry) => boolean; also?: (tx: WriteTx) => void },
): Promise<void> {
  const key = keys.entity(ctx.tenantId, def.type, current.record.uuid);
  const mark = (set: boolean, version: number) =>
    ctx.db
      .send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: tableName(),
                Key: key,
                UpdateExpression: set ? 'SET deleting_at = :at, v = :next' : 'REMOVE deleting_at SET v = :next',
                ConditionExpression: 'v = :v',
                ExpressionAttributeValues: { ':v': version, ':next': version + 1, ...(set ? { ':at': nowIso() } : {}) },
              },
            },
          ],
        }),
      )
      .catch((err: unknown) => {
        if ((err as Error).name === 'TransactionCanceledException') throw new ConcurrentUpdateError();
        throw err;
      });
  await mark(true, current.version);
  const marked = { record: current.record, version: current.version + 1 };
  const blocking = (await referencesTo(ctx, def.type, current.record.uuid)).filter(opts.blocks ?? ((r) => r.state !== 'discarded'));
  if (blocking.length) {
    await mark(false, marked.version).catch(() => undefined); // a failed clear expires on its own
    throw opts.onReferenced(blocking);
  }
  const tx = new WriteTx(ctx).remove(def, marked);
  opts.also?.(tx);
  await tx.commit();
}
