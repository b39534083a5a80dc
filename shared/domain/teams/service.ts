/**
 * Team commands: read, decide (decide.ts, where the rules and permissions are), write once.
 *
 * Atomicity and races. Each write is conditioned on the versions it read, and a write that attaches a team
 * under a parent (create, move) also touches that parent (version bump), so a concurrent move or delete
 * that read the parent's sub-teams conflicts and retries instead of missing the new child. The ancestors of
 * a move target are held at the versions read, so two concurrent moves cannot close a cycle (each one's
 * chain holds a team the other rewrites). Goals referencing the team are found by the store's
 * removeUnreferenced, race-free. Residual window: sub-teams are found through GSI1, which is eventually
 * consistent, so a sub-team created within the index's replication lag before a move/delete may be missed.
 */
import { isAdmin } from '#shared/auth/caller.ts';
import { newId } from '#shared/ids.ts';
import type { AccessSource, Checks } from '#shared/auth/permissions.ts';
import { nowIso } from '#shared/clock.ts';
import { createdOrStored, retryOnConflict } from '#shared/db/commands.ts';
import { entryPartitionOf, partitionEntries } from '#shared/db/index-queries.ts';
import type { DataCtx, ListEntry, Stored } from '#shared/db/model.ts';
import { getEntities, getEntity } from '#shared/db/reads.ts';
import { referencesTo, removeUnreferenced, type ReferenceEntry } from '#shared/db/references.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import {
  checkFits,
  checkSubTeamsArchived,
  checkTeamCreateAllowed,
  checkTeamDeleteAllowed,
  checkTeamDependents,
  decideCreateTeam,
  decideUpdateTeam,
  detachSubTeams,
  managesTeam,
  MAX_DEPENDENTS_NAMED,
  MAX_TX_ITEMS,
  planTeamUpdate,
  shiftDepths,
  teamInUse,
  tooBig,
  usersNamed,
  type TeamCreate,
  type TeamUpdate,
} from '#shared/domain/teams/decide.ts';
import { subteamsOf, teamEntity, type TeamRecord } from '#shared/domain/teams/entity.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import { ConcurrentUpdateError, NotFoundError } from '#shared/errors.ts';

const notFound = (id: string) => new NotFoundError('Team', id);

export async function getTeam(ctx: DomainCtx, id: string): Promise<TeamRecord> {
  const team = await ctx.loader.one(teamEntity, id);
  if (!team) throw notFound(id);
  return team;
}

// ---------- reads ----------

/** The users of the tenant among those the command names (one read for owners and members). */
async function knownUsers(ctx: DomainCtx, cmd: TeamUpdate): Promise<Set<string>> {
  return new Set((await ctx.loader.many(userEntity, usersNamed(cmd))).map((u) => u.uuid));
}

/** The first `max` entries of a GSI1 partition accepted by `accept` (Queries of 100 keys, so stopping early reads little). */
async function firstEntries(ctx: DataCtx, partition: string, max: number, accept: (e: ListEntry) => boolean = () => true): Promise<ListEntry[]> {
  const out: ListEntry[] = [];
  for await (const e of partitionEntries(ctx, partition, { pageSize: 100 })) {
    if (!accept(e)) continue;
    out.push(e);
    if (out.length >= max) break;
  }
  return out;
}

const childrenPartition = (ctx: DataCtx, teamUuid: string) => entryPartitionOf(ctx, subteamsOf, teamUuid);

/** The descendants of a team (any status), breadth first; refuses with 422 past `cap` since they must all fit one write. */
async function descendants(ctx: DataCtx, rootUuid: string, cap: number, field: string | undefined): Promise<Array<Stored<TeamRecord>>> {
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

/** `team` and its ancestors, nearest first, read consistently with their versions (stops on a loop or one past what a write can hold). */
async function ancestry(ctx: DataCtx, teamUuid: string): Promise<Array<Stored<TeamRecord>>> {
  const chain: Array<Stored<TeamRecord>> = [];
  for (let id: string | null = teamUuid; id && !chain.some((s) => s.record.uuid === id); ) {
    const s: Stored<TeamRecord> | undefined = await getEntity(ctx, teamEntity, id, true);
    if (!s) break;
    chain.push(s);
    if (chain.length > MAX_TX_ITEMS) throw tooBig('parent_uuid');
    id = s.record.parent_uuid;
  }
  return chain;
}

// ---------- writes ----------

/** Rewrites each team read with its new record (matched by uuid). */
function replaceAll(tx: WriteTx, read: Array<Stored<TeamRecord>>, next: TeamRecord[]): void {
  const byUuid = new Map(read.map((s) => [s.record.uuid, s]));
  for (const t of next) tx.replace(teamEntity, byUuid.get(t.uuid)!, t);
}

/** Holds the parent chain of a placement: the parent touched (version bump), its ancestors checked at the versions read (header). */
function holdChain(tx: WriteTx, chain: Array<Stored<TeamRecord>>): void {
  const [parent, ...above] = chain;
  if (parent) tx.touch(teamEntity, parent);
  for (const s of above) tx.checkVersion(teamEntity, s);
}

/** Admins only. Under a parent, the parent is touched in the same transaction (header comment). */
export async function createTeam(ctx: DomainCtx, input: TeamCreate): Promise<TeamRecord> {
  checkTeamCreateAllowed(ctx.caller);
  const users = await knownUsers(ctx, input);
  const [now, uuid] = [nowIso(), newId()];
  return createdOrStored(ctx, teamEntity, uuid, () => retryOnConflict(async () => {
    const parent = input.parent_uuid ? await getEntity(ctx, teamEntity, input.parent_uuid, true) : undefined;
    const record = decideCreateTeam(ctx.caller, input, { users, parent: parent?.record }, now, uuid);
    const tx = new WriteTx(ctx).create(teamEntity, record);
    if (parent) tx.touch(teamEntity, parent);
    checkFits(tx.size, 'member_uuids');
    await tx.commit();
    return record;
  }));
}

export async function updateTeam(ctx: DomainCtx, id: string, input: TeamUpdate): Promise<TeamRecord> {
  return retryOnConflict(async () => {
    const current = await getEntity(ctx, teamEntity, id, true);
    if (!current) throw notFound(id);
    const plan = planTeamUpdate(ctx.caller, current.record, input);
    const [users, chain] = await Promise.all([knownUsers(ctx, input), plan.parent && plan.parent !== id ? ancestry(ctx, plan.parent) : []]);
    const next = decideUpdateTeam(ctx.caller, current.record, input, { users, parentChain: chain.map((s) => s.record) }, nowIso());
    const tx = new WriteTx(ctx);
    holdChain(tx, chain);
    if (next.depth !== current.record.depth) {
      const below = await descendants(ctx, id, MAX_TX_ITEMS - tx.size, 'parent_uuid');
      replaceAll(tx, below, shiftDepths(below.map((s) => s.record), next.depth - current.record.depth, next.updated_at));
    }
    tx.replace(teamEntity, current, next);
    checkFits(tx.size, plan.moving ? 'parent_uuid' : 'member_uuids');
    await tx.commit();
    return next;
  });
}

/**
 * Admins only; returns the deleted record. Refused (422 has_dependents) while an active sub-team or a
 * non-discarded goal references the team; archived sub-teams are detached in the same transaction (see
 * decide.ts). When all of that does not fit one transaction, the delete is refused with 422 too_many.
 * Goals' references are held in the team's partition: the store's removeUnreferenced (mark, consistent read
 * of the references, delete) lets no racing goal create slip through (docs/data-model.md).
 */
export async function deleteTeam(ctx: DomainCtx, id: string): Promise<TeamRecord> {
  // A lost race (a child attached, a sub-team changed meanwhile) re-reads and re-checks everything.
  return retryOnConflict(async () => {
    const current = await getEntity(ctx, teamEntity, id, true);
    if (!current) throw notFound(id);
    checkTeamDeleteAllowed(ctx.caller);
    // One read of the sub-teams serves both the dependents check (index state) and the detaching below; the
    // goals read here name the dependents, the delete itself reads them again after marking the team.
    const [children, refs] = await Promise.all([firstEntries(ctx, childrenPartition(ctx, id), MAX_TX_ITEMS + 1), referencesTo(ctx, teamEntity.type, id)]);
    const goalsOf = (found: ReferenceEntry[]) => {
      const live = found.filter((r) => r.state !== 'discarded');
      // at most MAX_DEPENDENTS_NAMED of each kind, in the order read
      return live.filter((r) => live.filter((o) => o.list === r.list).indexOf(r) < MAX_DEPENDENTS_NAMED).map((r) => ({ kind: r.list, uuid: r.id }));
    };
    checkTeamDependents({ subTeams: children.map((e) => ({ uuid: e.id, status: e.state })), goals: goalsOf(refs) });
    const subTeams = [...(await getEntities(ctx, teamEntity, children.map((e) => e.id))).values()];
    checkSubTeamsArchived(subTeams.map((s) => s.record));
    const below = new Map<string, Array<Stored<TeamRecord>>>();
    let budget = MAX_TX_ITEMS - new WriteTx(ctx).remove(teamEntity, current).size - subTeams.length;
    for (const child of subTeams) {
      const under = await descendants(ctx, child.record.uuid, budget, undefined);
      below.set(child.record.uuid, under);
      budget -= under.length;
    }
    const detached = detachSubTeams(subTeams.map((s) => s.record), new Map([...below].map(([k, v]) => [k, v.map((s) => s.record)])), nowIso());
    await removeUnreferenced(ctx, teamEntity, current, {
      onReferenced: (found) => teamInUse({ subTeams: [], goals: goalsOf(found) }) ?? new ConcurrentUpdateError(),
      also: (tx) => {
        replaceAll(tx, [...subTeams, ...[...below.values()].flat()], detached);
        checkFits(tx.size, undefined);
      },
    });
    return current.record;
  });
}


/** Owners update but do not delete their team (decide.ts). */
export const teamChecks = (ctx: DomainCtx, t: TeamRecord): Checks => ({ can_update: isAdmin(ctx.caller) || managesTeam(ctx.caller, t), can_delete: isAdmin(ctx.caller) });

export const teamAccessSource = (ctx: DomainCtx, t: TeamRecord): AccessSource => (isAdmin(ctx.caller) ? 'admin' : t.owner_uuids.includes(ctx.caller.userId) ? 'owner' : 'public');

export const teamCollectionChecks = (ctx: DomainCtx): Checks => ({ can_create: isAdmin(ctx.caller) });
