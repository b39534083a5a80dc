import type { z } from 'zod';
import { canWriteContent, isAdmin } from '#shared/auth/caller.ts';
import { requireContentWriter, type AccessSource, type Checks } from '#shared/auth/permissions.ts';
import { entryPartitionOf, findUniques, getEntities, getEntity, mutateEntity, nowIso, partitionEntries, queryList, retryOnConflict, WriteTx, type BaseRecord, type DataCtx, type EntityDef, type Stored } from '#shared/db/store.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { LABEL_NAME_MAX, labelEntity, labelsInGroup, newLabelRecord, normalizeLabelName, type LabelRecord } from '#shared/domain/labels/entity.ts';
import { ConcurrentUpdateError, ForbiddenError, NotFoundError, ValidationError } from '#shared/errors.ts';
import { sentFields } from '#shared/domain/fields.ts';
import type { LabelCreateBody, LabelUpdateBody } from '#shared/schemas/labels.ts';

export type LabelCreateInput = z.infer<typeof LabelCreateBody>;
export type LabelUpdateInput = z.infer<typeof LabelUpdateBody>;

/*
 * Rules decided here (contract section 10 leaves them open):
 *  - Labels are one level deep: a regular label may sit under a label group; a group cannot itself have a
 *    parent (422 on parent_uuid), so deleting a group never has to recurse.
 *  - is_group cannot be turned off while the group has children (422 on is_group, code has_children).
 *  - Admins and members create; the label's creator (unless now a viewer) or an admin updates and deletes.
 *    Deleting a group deletes its children whoever created them: the group's manager owns its contents.
 */

// ---------- reads ----------

const notFound = (id: string) => new NotFoundError('Label', id);

/** The tenant's label, or undefined (goals and check-ins decide their own error for a missing label). */
export async function getLabel(ctx: DomainCtx, uuid: string): Promise<LabelRecord | undefined> {
  return ctx.loader.one(labelEntity, uuid);
}

/** The label for GET/PUT/DELETE /labels/{id}: 404 when it is not in the caller's tenant. */
export async function showLabel(ctx: DomainCtx, id: string): Promise<LabelRecord> {
  const label = await getLabel(ctx, id);
  if (!label) throw notFound(id);
  return label;
}

const childPartition = (ctx: DataCtx, groupUuid: string) => entryPartitionOf(ctx, labelsInGroup, groupUuid);

async function hasChildren(ctx: DataCtx, groupUuid: string): Promise<boolean> {
  return (await queryList(ctx, childPartition(ctx, groupUuid), { limit: 1 })).entries.length > 0;
}

// ---------- permissions and presentation ----------

const isCreator = (ctx: DomainCtx, l: LabelRecord) => l.creator_uuid === ctx.caller.userId;
const canManage = (ctx: DomainCtx, l: LabelRecord) => isAdmin(ctx.caller) || (canWriteContent(ctx.caller) && isCreator(ctx, l));

function requireManage(ctx: DomainCtx, l: LabelRecord, verb: 'update' | 'delete'): void {
  if (canManage(ctx, l)) return;
  throw new ForbiddenError(canWriteContent(ctx.caller) ? `Only admins and the label's creator can ${verb} it` : 'Viewers cannot change labels');
}

export const presentLabel = (l: LabelRecord) => ({
  uuid: l.uuid,
  name: l.name,
  is_group: l.is_group,
  parent_uuid: l.parent_uuid,
  color: l.color,
  creator_uuid: l.creator_uuid,
  created_at: l.created_at,
  updated_at: l.updated_at,
});

export function labelChecks(ctx: DomainCtx, l: LabelRecord): Checks {
  const manage = canManage(ctx, l);
  return { can_update: manage, can_delete: manage };
}

export const labelAccessSource = (ctx: DomainCtx, l: LabelRecord): AccessSource => (isAdmin(ctx.caller) ? 'admin' : isCreator(ctx, l) ? 'creator' : 'public');
export const labelCollectionChecks = (ctx: DomainCtx): Checks => ({ can_create: canWriteContent(ctx.caller) });

// ---------- writes ----------

function checkShape(l: LabelRecord): void {
  if (l.parent_uuid === l.uuid) throw ValidationError.field('parent_uuid', 'cycle', 'A label cannot be its own parent');
  if (l.is_group && l.parent_uuid) throw ValidationError.field('parent_uuid', 'group_with_parent', 'A label group cannot have a parent');
}

/**
 * Checks that `parentUuid` is a label group of the tenant and rewrites the group unchanged in `tx`, which
 * bumps its version. So the child's write fails (and is retried) if the group is deleted or turned into a
 * regular label before it commits, and a concurrent group delete or un-group, conditioned on the version it
 * read, fails and re-reads the children instead of missing this one.
 */
async function claimParent(ctx: DataCtx, tx: WriteTx, parentUuid: string): Promise<void> {
  const parent = await getEntity(ctx, labelEntity, parentUuid, true);
  if (!parent) throw ValidationError.field('parent_uuid', 'not_found', `parent_uuid ${parentUuid} is not a label of this tenant`);
  if (!parent.record.is_group) throw ValidationError.field('parent_uuid', 'not_a_group', `parent_uuid ${parentUuid} is not a label group`);
  tx.replace(labelEntity, parent, parent.record);
}

/** Creates a label; the name claim is taken in the same transaction, so of two same-name creates exactly one wins. */
export async function createLabel(ctx: DomainCtx, input: LabelCreateInput): Promise<LabelRecord> {
  requireContentWriter(ctx.caller);
  const record = newLabelRecord({ ...input, creator_uuid: ctx.caller.userId }, nowIso());
  checkShape(record);
  return retryOnConflict(async () => {
    const tx = new WriteTx(ctx);
    if (record.parent_uuid) await claimParent(ctx, tx, record.parent_uuid);
    await tx.create(labelEntity, record).commit();
    return record;
  });
}

export async function updateLabel(ctx: DomainCtx, id: string, input: LabelUpdateInput): Promise<LabelRecord> {
  const { after } = await mutateEntity(
    ctx,
    labelEntity,
    id,
    async (current, tx) => {
      const before = current.record;
      requireManage(ctx, before, 'update');
      const next: LabelRecord = { ...before, ...sentFields(input), updated_at: nowIso() };
      checkShape(next);
      if (before.is_group && !next.is_group && (await hasChildren(ctx, id))) {
        throw ValidationError.field('is_group', 'has_children', 'A label group with child labels cannot become a regular label; move or delete its children first');
      }
      if (next.parent_uuid && next.parent_uuid !== before.parent_uuid) await claimParent(ctx, tx, next.parent_uuid);
      // A rename releases the old name claim and takes the new one in this transaction (store diffs uniques).
      return next;
    },
    () => notFound(id),
  );
  return after;
}

/** DynamoDB's TransactWriteItems limit (store.ts refuses more). */
const TX_MAX_ITEMS = 100;

/**
 * Deletes a label; a group goes with its children (found through the `label@parent#<group>` entry list).
 * One transaction when it fits in DynamoDB's 100-item limit (a group with up to 32 children: 3 items per
 * child, 2 for the group). A larger group is deleted children-first in several transactions with the group
 * in the last one, so a failure midway leaves the group (with fewer children) and a retry finishes it.
 * Returns the deleted record.
 */
export async function deleteLabel(ctx: DomainCtx, id: string): Promise<LabelRecord> {
  return retryOnConflict(async () => {
    const current = await getEntity(ctx, labelEntity, id, true);
    if (!current) throw notFound(id);
    requireManage(ctx, current.record, 'delete');
    const children: Array<Stored<LabelRecord>> = [];
    if (current.record.is_group) {
      const ids: string[] = [];
      for await (const e of partitionEntries(ctx, childPartition(ctx, id))) ids.push(e.id);
      children.push(...(await getEntities(ctx, labelEntity, ids)).values());
    }
    await removeLast(ctx, labelEntity, children, current);
    return current.record;
  });
}

/** Removes `first` and then `last`, packing as many removals per transaction as fit, `last` in the final one. */
async function removeLast<R extends BaseRecord>(ctx: DataCtx, def: EntityDef<R>, first: Array<Stored<R>>, last: Stored<R>): Promise<void> {
  const cost = (s: Stored<R>) => new WriteTx(ctx).remove(def, s).size;
  const budget = TX_MAX_ITEMS - cost(last);
  let tx = new WriteTx(ctx);
  for (const s of first) {
    if (tx.size + cost(s) > budget) {
      await tx.commit();
      tx = new WriteTx(ctx);
    }
    tx.remove(def, s);
  }
  await tx.remove(def, last).commit();
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

/**
 * For goal and check-in writes (`labels` = label names). Returns the tenant's labels with those names
 * (case-insensitive, de-duplicated, in the order of first appearance) and, for each name with no label
 * yet, adds the creation of a regular label (creator = caller) to `tx`, so it is written atomically with
 * the goal or check-in. The records returned for new labels exist only once `tx` commits. Safe to call in a
 * mutateEntity `change` callback: it writes nothing itself. Existing label groups are returned as found.
 */
export async function labelsForNames(ctx: DomainCtx, names: string[], tx: WriteTx): Promise<LabelRecord[]> {
  const wanted = new Map<string, string>(); // normalized name → first spelling
  for (const raw of names) {
    const name = raw.trim();
    if (!name || name.length > LABEL_NAME_MAX) throw ValidationError.field('labels', 'invalid', `Label names must be 1 to ${LABEL_NAME_MAX} characters`);
    const key = normalizeLabelName(name);
    if (!wanted.has(key)) wanted.set(key, name);
  }
  const idByKey = await findUniques(ctx, 'label_name', wanted.keys());
  const byId = new Map((await ctx.loader.many(labelEntity, idByKey.values())).map((l) => [l.uuid, l]));
  const now = nowIso();
  return [...wanted].map(([key, name]) => {
    const id = idByKey.get(key);
    const existing = id ? byId.get(id) : undefined;
    if (existing) return existing;
    const record = newLabelRecord({ name, creator_uuid: ctx.caller.userId }, now);
    tx.create(autoCreatedLabelEntity, record);
    return record;
  });
}
