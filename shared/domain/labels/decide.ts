/**
 * Labels: the rules of each command as pure functions (no I/O, no clock, no id generation). service.ts
 * reads what they need, calls them, and writes once.
 *
 * Rules decided here (contract section 10 leaves them open):
 *  - A label (regular or group) may sit under a label group; groups nest (so `parent_parent_uuid` and
 *    `parent_is_group` filters mean something). No label is its own ancestor (422 cycle on parent_uuid).
 *    A group chain is at most MAX_LABEL_DEPTH groups deep: every group above a moved label is checked in
 *    the move's one transaction, which is what keeps concurrent moves from closing a cycle.
 *  - is_group cannot be turned off while the group has children (422 on is_group, code has_children).
 *  - Admins and members create; the label's creator (unless now a viewer) or an admin updates and deletes.
 *    Deleting a group deletes everything under it whoever created it: the group's manager owns its contents.
 */
import { canWriteContent, isAdmin, type Caller } from '#shared/auth/caller.ts';
import { accept, refuse, type Decision } from '#shared/decision.ts';
import {
  LABEL_NAME_MAX,
  newLabelRecord,
  normalizeLabelName,
  type ClaimedLabel,
  type LabelRecord,
  type LabelRef,
} from '#shared/domain/labels/entity.ts';
import { ForbiddenError, ValidationError, type AppError } from '#shared/errors.ts';

export interface LabelCreate {
  name: string;
  is_group?: boolean;
  parent_uuid?: string | null;
  color?: string | null;
}

/** Fields left undefined are unchanged; `null` clears. */
export type LabelUpdate = Partial<LabelCreate>;

/** Groups above a label, at most (see the header). */
export const MAX_LABEL_DEPTH = 20;

const isCreator = (caller: Caller, l: LabelRecord) => l.creator_uuid === caller.userId;
export const canManageLabel = (caller: Caller, l: LabelRecord) => isAdmin(caller) || (canWriteContent(caller) && isCreator(caller, l));

function manageRefusal(caller: Caller, l: LabelRecord, verb: 'update' | 'delete'): AppError | undefined {
  if (canManageLabel(caller, l)) return undefined;
  return new ForbiddenError(
    canWriteContent(caller) ? `Only admins and the label's creator can ${verb} it` : 'Viewers cannot change labels',
  );
}

const cycle = (message: string) => ValidationError.field('parent_uuid', 'cycle', message);

/**
 * `chain` is the new parent followed by its ancestors, nearest first, as read (empty: no such label in the
 * tenant; read up to MAX_LABEL_DEPTH + 1 labels). The parent must be a group, and `label` must not be on it.
 */
function parentRefusal(label: LabelRecord, chain: LabelRecord[]): AppError | undefined {
  const parentUuid = label.parent_uuid!;
  const [parent] = chain;
  if (!parent) return ValidationError.field('parent_uuid', 'not_found', `parent_uuid ${parentUuid} is not a label of this tenant`);
  if (!parent.is_group) return ValidationError.field('parent_uuid', 'not_a_group', `parent_uuid ${parentUuid} is not a label group`);
  if (chain.some((l) => l.uuid === label.uuid)) return cycle('A label group cannot be placed under itself or one of its own sub-groups');
  if (chain.length > MAX_LABEL_DEPTH)
    return ValidationError.field('parent_uuid', 'too_deep', `Label groups nest at most ${MAX_LABEL_DEPTH} deep`);
  return undefined;
}

/** Refused before anything is read (a create's precheck): viewers create no labels. */
export const labelCreateRefusal = (caller: Caller): AppError | undefined =>
  canWriteContent(caller) ? undefined : new ForbiddenError('Viewers cannot change content');

/** `parentChain`: the parent named and the groups above it, as read (labelCreateRefusal answered before). */
export function decideCreateLabel(
  caller: Caller,
  cmd: LabelCreate,
  parentChain: LabelRecord[],
  now: string,
  uuid: string,
): Decision<LabelRecord> {
  const record = newLabelRecord({ ...cmd, creator_uuid: caller.userId }, now, uuid);
  const refusal = record.parent_uuid ? parentRefusal(record, parentChain) : undefined;
  return refusal ? refuse(refusal) : accept(record);
}

/** What an update must read before it can be decided, beyond the label itself. */
export interface LabelUpdateReads {
  /** Whether the label has children (a group turned regular). */
  children: boolean;
  /** The new parent whose chain must be read. */
  parent: string | null;
}

/**
 * What an update reads beyond the label, or the refusal that needs no more reads: permission and a label named
 * as its own parent are refused at once (no read of the parent), so the caller sees the plainest error first.
 */
export function planLabelUpdate(caller: Caller, before: LabelRecord, cmd: LabelUpdate): Decision<LabelUpdateReads> {
  const refusal = manageRefusal(caller, before, 'update');
  if (refusal) return refuse(refusal);
  const parent = cmd.parent_uuid === undefined ? before.parent_uuid : cmd.parent_uuid;
  if (parent === before.uuid) return refuse(cycle('A label cannot be its own parent'));
  const isGroup = cmd.is_group ?? before.is_group;
  return accept({ children: before.is_group && !isGroup, parent: parent && parent !== before.parent_uuid ? parent : null });
}

/** `read`: what planLabelUpdate asked for (undefined when it refused: nothing more was read). */
export function decideUpdateLabel(
  caller: Caller,
  before: LabelRecord,
  cmd: LabelUpdate,
  read: { hasChildren: boolean; parentChain: LabelRecord[] } | undefined,
  now: string,
): Decision<LabelRecord> {
  const plan = planLabelUpdate(caller, before, cmd);
  if ('error' in plan) return plan;
  const sent = Object.fromEntries(Object.entries(cmd).filter(([, v]) => v !== undefined)) as LabelUpdate;
  const next: LabelRecord = { ...before, ...sent, name: sent.name?.trim() ?? before.name, updated_at: now };
  if (plan.write.children && read?.hasChildren) {
    return refuse(
      ValidationError.field(
        'is_group',
        'has_children',
        'A label group with child labels cannot become a regular label; move or delete its children first',
      ),
    );
  }
  const refusal = plan.write.parent ? parentRefusal(next, read?.parentChain ?? []) : undefined;
  return refusal ? refuse(refusal) : accept(next);
}

/** A delete's refusal, or the label to delete (a group with everything under it, read after). */
export function decideDeleteLabel(caller: Caller, label: LabelRecord): Decision<LabelRecord> {
  const refusal = manageRefusal(caller, label, 'delete');
  return refusal ? refuse(refusal) : accept(label);
}

// ---------- labels named on a goal or a check-in ----------

/** The label names of a body, normalized (first spelling kept), or the 422 for a name out of bounds. */
export function labelNamesOf(names: readonly string[]): { wanted: Map<string, string> } | { error: AppError } {
  const wanted = new Map<string, string>(); // normalized name → first spelling
  for (const raw of names) {
    const name = raw.trim();
    if (!name || name.length > LABEL_NAME_MAX)
      return { error: ValidationError.field('labels', 'invalid', `Label names must be 1 to ${LABEL_NAME_MAX} characters`) };
    const key = normalizeLabelName(name);
    if (!wanted.has(key)) wanted.set(key, name);
  }
  return { wanted };
}

/**
 * The labels the names resolve to, in order, as `{ uuid, name }`: an existing one by its name claim (named as the
 * claim spells it, or as `existing`, the labels read for claims that carry no name), else a new regular label
 * (its id the n-th of `ids`, n its place among the distinct names, so a retry names the same label).
 */
export function resolveLabels(
  wanted: ReadonlyMap<string, string>,
  claims: ReadonlyMap<string, ClaimedLabel>,
  existing: ReadonlyMap<string, Pick<LabelRecord, 'uuid' | 'name'>>,
  ids: readonly string[],
  creatorUuid: string,
  now: string,
): { labels: LabelRef[]; created: LabelRecord[] } {
  const created: LabelRecord[] = [];
  const labels = [...wanted].map(([key, name], i): LabelRef => {
    const claimed = claims.get(key);
    const found = claimed && (claimed.name ?? existing.get(claimed.uuid)?.name);
    if (claimed && found !== undefined) return { uuid: claimed.uuid, name: found };
    const record = newLabelRecord({ name, creator_uuid: creatorUuid }, now, ids[i]);
    created.push(record);
    return { uuid: record.uuid, name: record.name };
  });
  return { labels: distinctLabels(labels), created };
}

/** What a command read to resolve label names (labels/service.ts `readLabelNames`). */
export interface LabelNamesRead {
  named: ReturnType<typeof labelNamesOf>;
  claims: ReadonlyMap<string, ClaimedLabel>;
  existing: ReadonlyMap<string, Pick<LabelRecord, 'uuid' | 'name'>>;
}

/** Pure: the labels the names read resolve to (resolveLabels), or the 422 of a name out of bounds. */
export function namedLabels(
  read: LabelNamesRead,
  ids: readonly string[],
  creatorUuid: string,
  now: string,
): Decision<{ labels: LabelRef[]; created: LabelRecord[] }> {
  if ('error' in read.named) return refuse(read.named.error);
  return accept(resolveLabels(read.named.wanted, read.claims, read.existing, ids, creatorUuid, now));
}

/** Each label once, in order of first appearance. */
export function distinctLabels(labels: readonly LabelRef[]): LabelRef[] {
  const seen = new Set<string>();
  return labels.filter((l) => !seen.has(l.uuid) && !!seen.add(l.uuid)).map((l) => ({ uuid: l.uuid, name: l.name }));
}

// ---------- label names kept on goals and check-ins (the change stream's `label-names` projection) ----------

/** A record naming labels: a goal or a check-in. `labels` is absent on records written before names were kept. */
export interface Labelled {
  label_uuids: string[];
  labels?: LabelRef[];
}

/**
 * The names a record should carry: its `label_uuids` in order, each named as the label is now (`current`:
 * the labels that exist, by uuid); a label deleted since it was attached is left out, as the presenter does.
 */
export function currentLabels(labelUuids: readonly string[], current: ReadonlyMap<string, Pick<LabelRecord, 'name'>>): LabelRef[] {
  return distinctLabels(
    labelUuids.flatMap((uuid) => {
      const l = current.get(uuid);
      return l ? [{ uuid, name: l.name }] : [];
    }),
  );
}

/** The `labels` to write on a record so it names its labels as they are now, or undefined when it already does. */
export function decideLabelSync(record: Labelled, current: ReadonlyMap<string, Pick<LabelRecord, 'name'>>): LabelRef[] | undefined {
  const next = currentLabels(record.label_uuids, current);
  if (record.labels === undefined && record.label_uuids.length === 0) return undefined; // nothing to name: an old record stays as it is
  return record.labels !== undefined && sameLabels(record.labels, next) ? undefined : next;
}

const sameLabels = (a: readonly LabelRef[], b: readonly LabelRef[]) =>
  a.length === b.length && a.every((l, i) => l.uuid === b[i]!.uuid && l.name === b[i]!.name);

/**
 * Whether a goal or check-in change may have left its names behind its labels, so the projection reads its
 * labels again: a new record naming labels (a label renamed between the command's read and its commit), labels
 * or names that changed (a command's or a fan-out's write; checked once more, which then writes nothing), or a
 * record naming labels without names (written before names were kept: named on its first change). A write that
 * kept both (a check-in moving the goal, a title edit) needs nothing.
 */
export function labelsMayBeStale(before: Labelled | undefined, after: Labelled | undefined): boolean {
  if (!after) return false;
  if (after.labels === undefined) return after.label_uuids.length > 0;
  if (!before) return after.label_uuids.length > 0;
  return (
    JSON.stringify(before.label_uuids) !== JSON.stringify(after.label_uuids) ||
    JSON.stringify(before.labels ?? null) !== JSON.stringify(after.labels)
  );
}

/** Whether a label change changes what goals and check-ins show: a rename (any spelling) or a delete. */
export function labelNameChanged(before: Pick<LabelRecord, 'name'> | undefined, after: Pick<LabelRecord, 'name'> | undefined): boolean {
  return !!before && (!after || before.name !== after.name);
}

/**
 * `before`'s labels named as `after` names them wherever both carry the label (a label deleted meanwhile left
 * out of both): a write that only brought the names up to date then presents no difference, so it is no
 * `goal.updated`/`checkin.updated` event (a label rename never was one: names used to be read when presented).
 * A record written before names were kept is left as it is (presented from the labels read).
 */
export function namedAsAfter<R extends Labelled>(before: R, after: Labelled): R {
  if (before.labels === undefined || after.labels === undefined) return before;
  const kept = new Set(after.label_uuids);
  const now = new Map(after.labels.map((l) => [l.uuid, l]));
  return { ...before, labels: before.labels.flatMap((l) => (!kept.has(l.uuid) ? [l] : now.has(l.uuid) ? [now.get(l.uuid)!] : [])) };
}
