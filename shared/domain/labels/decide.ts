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
import { requireContentWriter } from '#shared/auth/permissions.ts';
import { LABEL_NAME_MAX, newLabelRecord, normalizeLabelName, type LabelRecord } from '#shared/domain/labels/entity.ts';
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

function requireManage(caller: Caller, l: LabelRecord, verb: 'update' | 'delete'): void {
  if (canManageLabel(caller, l)) return;
  throw new ForbiddenError(canWriteContent(caller) ? `Only admins and the label's creator can ${verb} it` : 'Viewers cannot change labels');
}

const cycle = (message: string) => ValidationError.field('parent_uuid', 'cycle', message);

/**
 * `chain` is the new parent followed by its ancestors, nearest first, as read (empty: no such label in the
 * tenant; read up to MAX_LABEL_DEPTH + 1 labels). The parent must be a group, and `label` must not be on it.
 */
function checkParent(label: LabelRecord, chain: LabelRecord[]): void {
  const parentUuid = label.parent_uuid!;
  const [parent] = chain;
  if (!parent) throw ValidationError.field('parent_uuid', 'not_found', `parent_uuid ${parentUuid} is not a label of this tenant`);
  if (!parent.is_group) throw ValidationError.field('parent_uuid', 'not_a_group', `parent_uuid ${parentUuid} is not a label group`);
  if (chain.some((l) => l.uuid === label.uuid)) throw cycle('A label group cannot be placed under itself or one of its own sub-groups');
  if (chain.length > MAX_LABEL_DEPTH) throw ValidationError.field('parent_uuid', 'too_deep', `Label groups nest at most ${MAX_LABEL_DEPTH} deep`);
}

/** Refused before anything is read: viewers create no labels. */
export const checkLabelCreateAllowed = (caller: Caller) => requireContentWriter(caller);

export function decideCreateLabel(caller: Caller, cmd: LabelCreate, parentChain: LabelRecord[], now: string, uuid: string): LabelRecord {
  checkLabelCreateAllowed(caller);
  const record = newLabelRecord({ ...cmd, creator_uuid: caller.userId }, now, uuid);
  if (record.parent_uuid) checkParent(record, parentChain);
  return record;
}

/** What an update must read before it can be decided, beyond the label itself. */
export interface LabelUpdateReads {
  /** Whether the label has children (a group turned regular). */
  children: boolean;
  /** The new parent whose chain must be read. */
  parent: string | null;
}

/**
 * Decides what needs no more reads: permission and a label named as its own parent are refused at once (no
 * read of the parent), so the caller sees the plainest error first.
 */
export function planLabelUpdate(caller: Caller, before: LabelRecord, cmd: LabelUpdate): LabelUpdateReads {
  requireManage(caller, before, 'update');
  const parent = cmd.parent_uuid === undefined ? before.parent_uuid : cmd.parent_uuid;
  if (parent === before.uuid) throw cycle('A label cannot be its own parent');
  const isGroup = cmd.is_group ?? before.is_group;
  return { children: before.is_group && !isGroup, parent: parent && parent !== before.parent_uuid ? parent : null };
}

export function decideUpdateLabel(caller: Caller, before: LabelRecord, cmd: LabelUpdate, read: { hasChildren: boolean; parentChain: LabelRecord[] }, now: string): LabelRecord {
  const plan = planLabelUpdate(caller, before, cmd);
  const sent = Object.fromEntries(Object.entries(cmd).filter(([, v]) => v !== undefined)) as LabelUpdate;
  const next: LabelRecord = { ...before, ...sent, name: sent.name?.trim() ?? before.name, updated_at: now };
  if (plan.children && read.hasChildren) {
    throw ValidationError.field('is_group', 'has_children', 'A label group with child labels cannot become a regular label; move or delete its children first');
  }
  if (plan.parent) checkParent(next, read.parentChain);
  return next;
}

export function decideDeleteLabel(caller: Caller, label: LabelRecord): void {
  requireManage(caller, label, 'delete');
}

// ---------- labels named on a goal or a check-in ----------

/** The label names of a body, normalized (first spelling kept), or the 422 for a name out of bounds. */
export function labelNamesOf(names: readonly string[]): { wanted: Map<string, string> } | { error: AppError } {
  const wanted = new Map<string, string>(); // normalized name → first spelling
  for (const raw of names) {
    const name = raw.trim();
    if (!name || name.length > LABEL_NAME_MAX) return { error: ValidationError.field('labels', 'invalid', `Label names must be 1 to ${LABEL_NAME_MAX} characters`) };
    const key = normalizeLabelName(name);
    if (!wanted.has(key)) wanted.set(key, name);
  }
  return { wanted };
}

/**
 * The labels the names resolve to, in order: an existing one by its name claim, else a new regular label
 * (its id the n-th of `ids`, n its place among the distinct names, so a retry names the same label).
 */
export function resolveLabels(
  wanted: ReadonlyMap<string, string>,
  claims: ReadonlyMap<string, string>,
  existing: ReadonlyMap<string, LabelRecord>,
  ids: readonly string[],
  creatorUuid: string,
  now: string,
): { labels: LabelRecord[]; created: LabelRecord[] } {
  const created: LabelRecord[] = [];
  const labels = [...wanted].map(([key, name], i) => {
    const id = claims.get(key);
    const found = id ? existing.get(id) : undefined;
    if (found) return found;
    const record = newLabelRecord({ name, creator_uuid: creatorUuid }, now, ids[i]);
    created.push(record);
    return record;
  });
  return { labels, created };
}
