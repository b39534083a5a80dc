import { canWriteContent, isAdmin } from '#shared/auth/caller.ts';
import { newId } from '#shared/ids.ts';
import type { AccessSource, Checks } from '#shared/auth/permissions.ts';
import { orStored, runCommand } from '#shared/command/run.ts';
import { entryPartitionOf, partitionEntries, queryList } from '#shared/db/index-queries.ts';
import type { BaseRecord, EntityDef, Stored } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { findClaims, getEntities, getEntity } from '#shared/db/reads.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { entityShow } from '#shared/domain/entity-show.ts';
import type { Loader } from '#shared/list/entity-cache.ts';
import { accept, refuse } from '#shared/decision.ts';
import {
  canManageLabel,
  decideCreateLabel,
  decideDeleteLabel,
  decideUpdateLabel,
  labelCreateRefusal,
  labelNamesOf,
  MAX_LABEL_DEPTH,
  planLabelUpdate,
  type LabelCreate,
  type LabelNamesRead,
  type LabelUpdate,
} from '#shared/domain/labels/decide.ts';
import { claimedLabels, labelEntity, labelsInGroup, labelsToRead, type LabelRecord } from '#shared/domain/labels/entity.ts';
import { ConcurrentUpdateError, MAX_TRANSACTION_ITEMS, NotFoundError } from '#shared/errors.ts';

/** Label commands: read, decide (decide.ts, where the rules are), write once. */

// ---------- reads ----------

const notFound = (id: string) => new NotFoundError('Label', id);

/** The label for GET /labels/{id}: 404 when it is not in the caller's tenant. */
export const showLabel = entityShow(labelEntity, notFound);

const childPartition = (ctx: DataCtx, groupUuid: string) => entryPartitionOf(ctx, labelsInGroup, groupUuid);

async function hasChildren(ctx: DataCtx, groupUuid: string): Promise<boolean> {
  return (await queryList(ctx, childPartition(ctx, groupUuid), { limit: 1 })).entries.length > 0;
}

/** `uuid` and the groups above it, nearest first, read consistently with their versions (stops on a loop or one past the bound). */
async function chainOf(ctx: DataCtx, uuid: string): Promise<Array<Stored<LabelRecord>>> {
  const chain: Array<Stored<LabelRecord>> = [];
  for (let id: string | null = uuid; id && chain.length <= MAX_LABEL_DEPTH && !chain.some((s) => s.record.uuid === id); ) {
    const s: Stored<LabelRecord> | undefined = await getEntity(ctx, labelEntity, id, true);
    if (!s) break;
    chain.push(s);
    id = s.record.parent_uuid;
  }
  return chain;
}

/**
 * Places a label under the chain read: the parent is touched (its version moves, so a concurrent delete or
 * un-group of the parent, conditioned on the version it read, re-reads the children instead of missing this
 * one) and every group above it is checked at the version read (so two concurrent moves cannot close a
 * cycle: each one's chain holds a label the other rewrites).
 */
function holdChain(tx: WriteTx, chain: Array<Stored<LabelRecord>>): void {
  const [parent, ...above] = chain;
  if (parent) tx.touch(labelEntity, parent);
  for (const s of above) tx.checkVersion(labelEntity, s);
}

// ---------- permissions and presentation ----------

export function labelChecks(ctx: DomainCtx, l: LabelRecord): Checks {
  const manage = canManageLabel(ctx.caller, l);
  return { can_update: manage, can_delete: manage };
}

export const labelAccessSource = (ctx: DomainCtx, l: LabelRecord): AccessSource =>
  isAdmin(ctx.caller) ? 'admin' : l.creator_uuid === ctx.caller.userId ? 'creator' : 'public';
export const labelCollectionChecks = (ctx: DomainCtx): Checks => ({ can_create: canWriteContent(ctx.caller) });

// ---------- writes ----------

/** Creates a label; the name claim is taken in the same transaction, so of two same-name creates exactly one wins. */
export async function createLabel(ctx: DomainCtx, input: LabelCreate): Promise<LabelRecord> {
  const uuid = newId();
  return runCommand(ctx, {
    ids: uuid,
    precheck: () => labelCreateRefusal(ctx.caller),
    read: () => (input.parent_uuid ? chainOf(ctx, input.parent_uuid) : Promise.resolve([])),
    decide: (chain, now) =>
      decideCreateLabel(
        ctx.caller,
        input,
        chain.map((s) => s.record),
        now,
        uuid,
      ),
    write: (tx, record, chain) => {
      holdChain(tx, chain);
      tx.create(labelEntity, record);
      return record;
    },
    stored: orStored(labelEntity, uuid, (stored) => stored),
  });
}

/** The label, then (unless planLabelUpdate refuses at once) whether it has children and the new parent's chain, as the plan asks. */
async function readLabelUpdate(ctx: DomainCtx, id: string, input: LabelUpdate) {
  const current = await getEntity(ctx, labelEntity, id, true);
  if (!current) return undefined;
  const plan = planLabelUpdate(ctx.caller, current.record, input);
  if ('error' in plan) return { current, chain: [] };
  const [children, chain] = await Promise.all([
    plan.write.children && hasChildren(ctx, id),
    plan.write.parent ? chainOf(ctx, plan.write.parent) : [],
  ]);
  return { current, chain, read: { hasChildren: children, parentChain: chain.map((s) => s.record) } };
}

export async function updateLabel(ctx: DomainCtx, id: string, input: LabelUpdate): Promise<LabelRecord> {
  return runCommand(ctx, {
    read: () => readLabelUpdate(ctx, id, input),
    decide: (s, now) => (s ? decideUpdateLabel(ctx.caller, s.current.record, input, s.read, now) : refuse(notFound(id))),
    write: (tx, next, s) => {
      // A rename releases the old name claim and takes the new one in this transaction (store diffs uniques).
      holdChain(tx, s!.chain);
      tx.replace(labelEntity, s!.current, next);
      return next;
    },
  });
}

/** Everything under a group (sub-groups' contents included), deepest level first. */
async function descendantsDeepestFirst(ctx: DataCtx, groupUuid: string): Promise<Array<Stored<LabelRecord>>> {
  const levels: Array<Array<Stored<LabelRecord>>> = [];
  const seen = new Set([groupUuid]);
  for (let frontier = [groupUuid]; frontier.length; ) {
    const ids: string[] = [];
    for (const parent of frontier)
      for await (const e of partitionEntries(ctx, childPartition(ctx, parent))) if (!seen.has(e.id)) seen.add(e.id) && ids.push(e.id);
    const level = [...(await getEntities(ctx, labelEntity, ids)).values()];
    if (level.length) levels.push(level);
    frontier = level.filter((s) => s.record.is_group).map((s) => s.record.uuid);
  }
  return levels.reverse().flat();
}

/**
 * Deletes a label; a group goes with everything under it (found through the `label@parent#<group>` entry
 * lists). One transaction when it fits in DynamoDB's 100-item limit (MAX_TRANSACTION_ITEMS; a group with up to 32 children: 3 items
 * per child, 2 for the group). A larger group is a plan of several transactions, deepest-first with the group in
 * the last one, which the runner commits in order: a failure midway leaves the group (with fewer labels under it)
 * and a retry finishes it. Returns the deleted record.
 */
export async function deleteLabel(ctx: DomainCtx, id: string): Promise<LabelRecord> {
  return runCommand(ctx, {
    read: async () => {
      const current = await getEntity(ctx, labelEntity, id, true);
      return (
        current && {
          current,
          under: current.record.is_group && canManageLabel(ctx.caller, current.record) ? await descendantsDeepestFirst(ctx, id) : [],
        }
      );
    },
    decide: (s) => {
      if (!s) return refuse(notFound(id));
      const d = decideDeleteLabel(ctx.caller, s.current.record);
      return 'error' in d ? d : accept({ label: d.write, ...s });
    },
    write: (tx, d, _s, run) => {
      removeInParts(ctx, labelEntity, d.under, d.current, tx, run.part);
      return d.label;
    },
  });
}

/**
 * Removes `first` and then `last`, packing as many removals per transaction as fit: the first in `tx`, each next
 * one started by `part()` (the runner commits them in order), `last` in the final one.
 */
function removeInParts<R extends BaseRecord>(
  ctx: DataCtx,
  def: EntityDef<R>,
  first: Array<Stored<R>>,
  last: Stored<R>,
  tx: WriteTx,
  part: () => WriteTx,
): void {
  const cost = (s: Stored<R>) => new WriteTx(ctx).remove(def, s).size;
  const budget = MAX_TRANSACTION_ITEMS - cost(last);
  let current = tx;
  let size = 0;
  for (const s of first) {
    if (size + cost(s) > budget) {
      current = part();
      size = 0;
    }
    current.remove(def, s);
    size += cost(s);
  }
  current.remove(def, last);
}

/**
 * A lost name claim while auto-creating means another request created that label between our lookup and
 * our commit: report it as a concurrent update so mutateEntity (or the caller) retries, and the retry
 * finds and reuses the label, rather than failing the goal or check-in with `taken`.
 */
const autoCreatedLabelEntity: EntityDef<LabelRecord> = {
  ...labelEntity,
  uniques: (l) => labelEntity.uniques!(l).map((u) => ({ ...u, onTaken: () => new ConcurrentUpdateError() })),
};

/** The writes of labels namedLabels made up: each with its name claim (a lost claim is a retry, not `taken`). */
export function addLabelCreates(tx: WriteTx, created: LabelRecord[]): void {
  for (const record of created) tx.create(autoCreatedLabelEntity, record);
}

/**
 * For goal-less callers of the label rules (check-in writes; `labels` = label names), the read, which needs no
 * caller (a route may start it beside the caller's read): the names as a body sent them (or their 422), their name
 * claims (each naming its label as spelled), and the labels of claims written before claims carried the name. The
 * names then resolve purely (labels/decide.ts `namedLabels`): the tenant's labels with those names
 * (case-insensitive, de-duplicated, in order of first appearance) and, for each name with no label yet, a new
 * regular label (creator = caller) with the n-th of the ids the command drew before its retry loop, so every
 * attempt names the same label. New labels are written only by addLabelCreates, in the command's transaction.
 */
export async function readLabelNames(data: DataCtx, loader: Pick<Loader, 'many'>, names: readonly string[]): Promise<LabelNamesRead> {
  const named = labelNamesOf(names);
  if ('error' in named) return { named, claims: new Map(), existing: new Map() };
  const claims = claimedLabels(await findClaims(data, 'label_name', named.wanted.keys()));
  const unnamed = labelsToRead(claims);
  const existing = new Map((unnamed.length ? await loader.many(labelEntity, unnamed) : []).map((l) => [l.uuid, l]));
  return { named, claims, existing };
}
