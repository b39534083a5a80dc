import { keys } from '#shared/db/keys.ts';
import { runCommand } from '#shared/command/run.ts';
import { partitionEntries } from '#shared/db/index-queries.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { findClaims, getEntity } from '#shared/db/reads.ts';
import { accept } from '#shared/decision.ts';
import { checkinEntity } from '#shared/domain/checkins/entity.ts';
import { checkinListsOf } from '#shared/domain/checkins/list-shards.ts';
import { GOAL_KINDS, goalEntity } from '#shared/domain/goals/entity.ts';
import { labelEntity, normalizeLabelName } from '#shared/domain/labels/entity.ts';
import { logger } from '#shared/logger.ts';
import { commitStep } from '#shared/stream/commit.ts';
import { labelSyncStep } from '#shared/stream/projections/label-names.ts';

/** Runs `work` on every id `ids` yields, `concurrency` at a time; returns how many returned true. */
async function each(
  ids: AsyncIterable<{ id: string }>,
  concurrency: number,
  work: (id: string) => Promise<boolean>,
): Promise<{ seen: number; changed: number }> {
  const it = ids[Symbol.asyncIterator]();
  let seen = 0;
  let changed = 0;
  let pulling: Promise<unknown> = Promise.resolve();
  const next = () => (pulling = pulling.then(() => it.next())) as Promise<IteratorResult<{ id: string }>>;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let r = await next(); !r.done; r = await next()) {
        seen += 1;
        if (await work(r.value.id)) changed += 1;
      }
    }),
  );
  return { seen, changed };
}

/** A label's name claim written again with the name it carries, when it carries none or another spelling; true when written. */
async function claimWithName(data: DataCtx, uuid: string): Promise<boolean> {
  return runCommand(data, {
    read: async () => {
      const label = await getEntity(data, labelEntity, uuid, true);
      const claim = label && (await findClaims(data, 'label_name', [normalizeLabelName(label.record.name)], true)).values().next().value;
      return { label, claim };
    },
    decide: ({ label, claim }) =>
      accept(!label || (claim?.id === label.record.uuid && claim.data?.name === label.record.name) ? undefined : label),
    write: (tx, label) => {
      if (label) tx.reclaim(labelEntity, label);
      return !!label;
    },
  });
}

/**
 * The backfill for data written before names were kept (`npm run admin -- backfill-label-names --tenant T`):
 * every label's name claim written again carrying the name (so a command naming the label reads the claim only),
 * then every goal and check-in synced (named: a GET is then one round trip). Idempotent and safe beside the
 * stream and live traffic (each write is conditioned on the version read): a second run writes nothing.
 */
export async function backfillLabelNames(
  data: DataCtx,
  opts: { concurrency?: number } = {},
): Promise<{ labels: number; claims: number; goals: number; checkins: number; named: number }> {
  const concurrency = Math.max(1, Math.min(opts.concurrency ?? 4, 64));
  const labels = await each(partitionEntries(data, keys.entityList(data.tenantId, labelEntity.type)), concurrency, (id) =>
    claimWithName(data, id),
  );
  let goals = 0;
  let checkins = 0;
  let named = 0;
  for (const kind of GOAL_KINDS) {
    const r = await each(partitionEntries(data, keys.entityList(data.tenantId, kind)), concurrency, (id) =>
      commitStep(data, labelSyncStep(goalEntity, id), logger),
    );
    goals += r.seen;
    named += r.changed;
  }
  for (const shard of await checkinListsOf(data)) {
    const r = await each(partitionEntries(data, keys.entityList(data.tenantId, shard)), concurrency, (id) =>
      commitStep(data, labelSyncStep(checkinEntity, id), logger),
    );
    checkins += r.seen;
    named += r.changed;
  }
  return { labels: labels.seen, claims: labels.changed, goals, checkins, named };
}
