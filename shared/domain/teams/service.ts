/**
 * Teams: domain rules (contract sections 5 and 10).
 *
 * Permissions. Contract 5 says both "admins create, update and delete teams" and "a member manages teams
 * it owns". Decision:
 *  - admins create, update, move (change parent_uuid) and delete any team;
 *  - a member who owns a team updates its attributes, owners and members, but neither moves it nor deletes
 *    it: both change the organisation around the team (a move re-depths a whole subtree under another
 *    team; a delete detaches sub-teams), which is an admin decision. Sending the current parent_uuid back
 *    unchanged is not a move;
 *  - viewers write nothing, even on a team they own; everyone reads every team.
 *
 * Tree. parent_uuid names a team of the tenant; no team is its own ancestor; depth is 0 for a root team and
 * the parent's depth + 1 otherwise, kept true for the whole subtree whenever a team moves.
 *
 * Atomicity and races. Every change to the tree is one TransactWriteItems (max 100 items): a move rewrites
 * the team and each descendant whose depth changes, a delete removes the team and detaches its archived
 * sub-teams. A change that would not fit is refused with 422 (`too_many`) rather than applied in pieces,
 * which could leave depths inconsistent. Each write is conditioned on the versions it read, and a write
 * that attaches a team under a parent (create, move) also rewrites that parent unchanged (version bump), so
 * a concurrent move or delete that read the parent's sub-teams conflicts and retries instead of missing the
 * new child. The ancestors of a move target are version-checked so two concurrent moves cannot close a
 * cycle. Residual window: sub-teams and goal references are found through GSI1, which is eventually
 * consistent, so a child created within the index's replication lag before a move/delete may be missed.
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { canWriteContent, isAdmin } from '#shared/auth/caller.ts';
import { requireAdmin, type AccessSource, type Checks } from '#shared/auth/permissions.ts';
import { entryPartitionOf, getEntities, getEntity, mutateEntity, nowIso, partitionEntries, retryOnConflict, WriteTx, type ListEntry, type Stored } from '#shared/db/store.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { sentFields } from '#shared/domain/fields.ts';
import { GOAL_KINDS, goalsByTeam } from '#shared/domain/goals/entity.ts';
import { subteamsOf, teamEntity, teamMemberships, type TeamRecord } from '#shared/domain/teams/entity.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import { ForbiddenError, HasDependentsError, MAX_TRANSACTION_ITEMS, TooManyWritesError, NotFoundError, ValidationError, type ErrorDetail } from '#shared/errors.ts';
import type { TeamCreateBody, TeamUpdateBody } from '#shared/schemas/teams.ts';

export type TeamCreateInput = z.infer<typeof TeamCreateBody>;
export type TeamUpdateInput = z.infer<typeof TeamUpdateBody>;

/** DynamoDB's TransactWriteItems limit. */
const MAX_TX_ITEMS = MAX_TRANSACTION_ITEMS;
/** Dependents named in a has_dependents error, per kind (enough to act on without reading everything). */
const MAX_DEPENDENTS_NAMED = 10;

const notFound = (id: string) => new NotFoundError('Team', id);
const parentNotFound = (id: string) => ValidationError.field('parent_uuid', 'not_found', `parent_uuid ${id} is not a team of this tenant`);
const cycle = () => ValidationError.field('parent_uuid', 'cycle', 'A team cannot be placed under itself or one of its own sub-teams');
const tooBig = (field: string | undefined) => new TooManyWritesError(field, 'Split it: fewer owners/members per team, or move or archive sub-teams first.');
function assertFits(items: number, field: string | undefined): void {
  if (items > MAX_TX_ITEMS) throw tooBig(field);
}

const uniq = (ids: string[] | undefined) => [...new Set(ids ?? [])];

export async function getTeam(ctx: DomainCtx, id: string): Promise<TeamRecord> {
  const team = await ctx.loader.one(teamEntity, id);
  if (!team) throw notFound(id);
  return team;
}

/** A team owner who may write (viewers never do). */
const managesTeam = (ctx: DomainCtx, t: TeamRecord) => canWriteContent(ctx.caller) && t.owner_uuids.includes(ctx.caller.userId);

/** Owners and members must be users of the tenant; every bad uuid is named in the details. */
async function checkUsers(ctx: DomainCtx, input: Pick<TeamUpdateInput, 'owner_uuids' | 'member_uuids'>): Promise<void> {
  const fields = ['owner_uuids', 'member_uuids'] as const;
  // one read for both lists
  const found = new Set((await ctx.loader.many(userEntity, fields.flatMap((f) => uniq(input[f])))).map((u) => u.uuid));
  const details: ErrorDetail[] = [];
  for (const field of fields) {
    for (const id of uniq(input[field])) if (!found.has(id)) details.push({ field, code: 'not_found', message: `${id} is not a user of this tenant` });
  }
  if (details.length) throw new ValidationError(details.map((d) => `${d.field}: ${d.message}`).join('; '), details);
}

/** The first `max` entries of a GSI1 partition accepted by `accept` (Queries of 100 keys, so stopping early reads little). */
async function firstEntries(ctx: DomainCtx, partition: string, max: number, accept: (e: ListEntry) => boolean = () => true): Promise<ListEntry[]> {
  const out: ListEntry[] = [];
  for await (const e of partitionEntries(ctx, partition, { pageSize: 100 })) {
    if (!accept(e)) continue;
    out.push(e);
    if (out.length >= max) break;
  }
  return out;
}

const childrenPartition = (ctx: DomainCtx, teamUuid: string) => entryPartitionOf(ctx, subteamsOf, teamUuid);

/** The descendants of a team (any status), breadth first; refuses with 422 past `cap` since they must all fit one write. */
async function descendants(ctx: DomainCtx, rootUuid: string, cap: number, field: string | undefined): Promise<Array<Stored<TeamRecord>>> {
  const out: Array<Stored<TeamRecord>> = [];
  let frontier = [rootUuid];
  while (frontier.length) {
    const childIds: string[] = [];
    for (const parent of frontier) {
      childIds.push(...(await firstEntries(ctx, childrenPartition(ctx, parent), cap + 1)).map((e) => e.id));
      if (out.length + childIds.length > cap) throw tooBig(field);
    }
    const found = await getEntities(ctx, teamEntity, childIds);
    const children = childIds.map((id) => found.get(id)).filter((s): s is Stored<TeamRecord> => !!s);
    out.push(...children);
    frontier = children.map((c) => c.record.uuid);
  }
  return out;
}

/** `team` and its ancestors, nearest first, read consistently with their versions. */
async function ancestry(ctx: DomainCtx, teamUuid: string): Promise<Array<Stored<TeamRecord>>> {
  const chain: Array<Stored<TeamRecord>> = [];
  for (let id: string | null = teamUuid; id; ) {
    const s: Stored<TeamRecord> | undefined = await getEntity(ctx, teamEntity, id, true);
    if (!s) break;
    chain.push(s);
    // A valid chain is at most as long as the deepest tree a write can maintain; this also stops on corrupt loops.
    if (chain.length > MAX_TX_ITEMS) throw tooBig('parent_uuid');
    id = s.record.parent_uuid;
  }
  return chain;
}

/** Fails the transaction if the team changed since it was read. */
/** Rewrites every descendant with its depth shifted by `delta` (no-op for 0). */
async function shiftSubtree(ctx: DomainCtx, tx: WriteTx, rootUuid: string, delta: number, now: string, cap: number, field: string | undefined): Promise<void> {
  if (delta === 0) return;
  for (const d of await descendants(ctx, rootUuid, cap, field)) tx.replace(teamEntity, d, { ...d.record, depth: d.record.depth + delta, updated_at: now });
}

/**
 * Places `next` under `next.parent_uuid` (or at the root): validates the new parent (a team of the tenant,
 * neither the team itself nor one of its descendants), sets `next.depth`, and adds to `tx` the new parent's
 * version bump, its ancestors' version checks and the re-depthed subtree (see the header comment).
 */
async function place(ctx: DomainCtx, tx: WriteTx, current: Stored<TeamRecord>, next: TeamRecord): Promise<void> {
  next.depth = 0;
  if (next.parent_uuid) {
    if (next.parent_uuid === next.uuid) throw cycle();
    const chain = await ancestry(ctx, next.parent_uuid);
    if (!chain.length) throw parentNotFound(next.parent_uuid);
    if (chain.some((s) => s.record.uuid === next.uuid)) throw cycle();
    const [parent, ...above] = chain;
    next.depth = parent!.record.depth + 1;
    tx.replace(teamEntity, parent!, parent!.record);
    for (const a of above) tx.checkVersion(teamEntity, a);
  }
  await shiftSubtree(ctx, tx, next.uuid, next.depth - current.record.depth, next.updated_at, MAX_TX_ITEMS - tx.size, 'parent_uuid');
}

/** Admins only. Under a parent, the parent is rewritten unchanged in the same transaction (header comment). */
export async function createTeam(ctx: DomainCtx, input: TeamCreateInput): Promise<TeamRecord> {
  requireAdmin(ctx.caller, 'Only admins can create teams');
  await checkUsers(ctx, input);
  const now = nowIso();
  const record: TeamRecord = {
    uuid: randomUUID(),
    name: input.name,
    display_name: input.display_name ?? input.name,
    parent_uuid: input.parent_uuid ?? null,
    owner_uuids: uniq(input.owner_uuids),
    member_uuids: uniq(input.member_uuids),
    status: input.status ?? 'active',
    is_org: input.is_org ?? false,
    depth: 0,
    creator_uuid: ctx.caller.userId,
    created_at: now,
    updated_at: now,
  };
  const parentUuid = record.parent_uuid;
  if (!parentUuid) {
    const tx = new WriteTx(ctx).create(teamEntity, record);
    assertFits(tx.size, 'member_uuids');
    await tx.commit();
    return record;
  }
  await mutateEntity(
    ctx,
    teamEntity,
    parentUuid,
    (parent, tx) => {
      record.depth = parent.record.depth + 1;
      tx.create(teamEntity, record);
      assertFits(tx.size + 1, 'member_uuids'); // + the parent's rewrite mutateEntity adds
      return parent.record;
    },
    () => parentNotFound(parentUuid),
  );
  return record;
}

/** Admins update anything; owners (not viewers) everything but parent_uuid; others 403 (header comment). */
export async function updateTeam(ctx: DomainCtx, id: string, input: TeamUpdateInput): Promise<TeamRecord> {
  const { after } = await mutateEntity(
    ctx,
    teamEntity,
    id,
    async (current, tx) => {
      const team = current.record;
      const moving = input.parent_uuid !== undefined && input.parent_uuid !== team.parent_uuid;
      if (!isAdmin(ctx.caller)) {
        if (!managesTeam(ctx, team)) throw new ForbiddenError(canWriteContent(ctx.caller) ? 'Only admins and owners of this team can update it' : 'Viewers cannot change teams');
        if (moving) throw new ForbiddenError('Only admins can move a team to another parent');
      }
      await checkUsers(ctx, input);
      const next: TeamRecord = {
        ...team,
        ...(sentFields(input) as Partial<TeamRecord>),
        owner_uuids: input.owner_uuids ? uniq(input.owner_uuids) : team.owner_uuids,
        member_uuids: input.member_uuids ? uniq(input.member_uuids) : team.member_uuids,
        depth: team.depth,
        updated_at: nowIso(),
      };
      if (moving) await place(ctx, tx, current, next);
      assertFits(tx.size + new WriteTx(ctx).replace(teamEntity, current, next).size, moving ? 'parent_uuid' : 'member_uuids');
      return next;
    },
    () => notFound(id),
  );
  return after;
}

/**
 * Admins only; returns the deleted record. Refused (422 has_dependents, naming them) while an active
 * sub-team or a non-discarded goal (objective, key result, initiative) references the team.
 *
 * Archived sub-teams do not block the delete. Decision: they are detached in the same transaction, becoming
 * root teams (parent_uuid null, depth 0) with their own sub-trees moving up with them, so no team is left
 * pointing at a deleted parent and depths stay true. When all of that does not fit one transaction, the
 * delete is refused with 422 too_many (archive-and-move the sub-teams first).
 */
export async function deleteTeam(ctx: DomainCtx, id: string): Promise<TeamRecord> {
  // A lost race (a child attached, a sub-team changed meanwhile) re-reads and re-checks everything.
  return retryOnConflict(async () => {
    const current = await getEntity(ctx, teamEntity, id, true);
    if (!current) throw notFound(id);
    requireAdmin(ctx.caller, 'Only admins can delete teams');
    // One read of the sub-teams serves both the dependents check (index state) and the detaching below.
    const [children, ...goalsByKind] = await Promise.all([
      firstEntries(ctx, childrenPartition(ctx, id), MAX_TX_ITEMS + 1),
      ...GOAL_KINDS.map((kind) => firstEntries(ctx, entryPartitionOf(ctx, goalsByTeam(kind), id), MAX_DEPENDENTS_NAMED, (e) => e.state !== 'discarded')),
    ]);
    const details = [
      ...children.filter((e) => e.state === 'active').slice(0, MAX_DEPENDENTS_NAMED).map((e) => subTeamDetail(e.id)),
      ...GOAL_KINDS.flatMap((kind, i) => goalsByKind[i]!.map((e): ErrorDetail => ({ field: 'goals', code: 'okr_relationship', message: `${kind} ${e.id}` }))),
    ];
    if (details.length) throw dependentsError(details);
    if (children.length > MAX_TX_ITEMS) throw tooBig(undefined);

    const now = nowIso();
    const tx = new WriteTx(ctx).remove(teamEntity, current);
    for (const child of (await getEntities(ctx, teamEntity, children.map((e) => e.id))).values()) {
      // The index said archived; the record is the truth (the index lags writes slightly).
      if (child.record.status === 'active') throw dependentsError([subTeamDetail(child.record.uuid)]);
      tx.replace(teamEntity, child, { ...child.record, parent_uuid: null, depth: 0, updated_at: now });
      await shiftSubtree(ctx, tx, child.record.uuid, -child.record.depth, now, MAX_TX_ITEMS - tx.size, undefined);
    }
    assertFits(tx.size, undefined);
    await tx.commit();
    return current.record;
  });
}

const subTeamDetail = (uuid: string): ErrorDetail => ({ field: 'sub_teams', code: 'active_sub_team', message: `active sub-team ${uuid}` });
const dependentsError = (details: ErrorDetail[]) =>
  new HasDependentsError('The team has active sub-teams or OKR relationships; archive or move the sub-teams and remove the team from its goals first', details);

export const presentTeam = (t: TeamRecord) => ({
  uuid: t.uuid,
  name: t.name,
  display_name: t.display_name,
  parent_uuid: t.parent_uuid,
  owner_uuids: t.owner_uuids,
  member_uuids: t.member_uuids,
  status: t.status,
  is_org: t.is_org,
  depth: t.depth,
  creator_uuid: t.creator_uuid,
  team_memberships: teamMemberships(t),
  created_at: t.created_at,
  updated_at: t.updated_at,
});

/** Owners update but do not delete their team (header comment), so checks are computed here. */
export const teamChecks = (ctx: DomainCtx, t: TeamRecord): Checks => ({ can_update: isAdmin(ctx.caller) || managesTeam(ctx, t), can_delete: isAdmin(ctx.caller) });

export const teamAccessSource = (ctx: DomainCtx, t: TeamRecord): AccessSource => (isAdmin(ctx.caller) ? 'admin' : t.owner_uuids.includes(ctx.caller.userId) ? 'owner' : 'public');

export const teamCollectionChecks = (ctx: DomainCtx): Checks => ({ can_create: isAdmin(ctx.caller) });
