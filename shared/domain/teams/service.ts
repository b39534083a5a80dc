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
import { orStored, runCommand } from '#shared/command/run.ts';
import { entriesOf, entryPartitionOf, partitionEntries } from '#shared/db/index-queries.ts';
import type { ListEntry, Stored } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntities, getEntity } from '#shared/db/reads.ts';
import { referencesTo, removeUnreferenced, type ReferenceEntry } from '#shared/db/references.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { entityShow } from '#shared/domain/entity-show.ts';
import { refuse } from '#shared/decision.ts';
import {
  activeSubTeamRefusal,
  decideCreateTeam,
  decideDeleteTeam,
  decideUpdateTeam,
  dependentsRefusal,
  fitsRefusal,
  managesTeam,
  MAX_DEPENDENTS_NAMED,
  MAX_TX_ITEMS,
  planTeamUpdate,
  teamCreateRefusal,
  teamDeleteRefusal,
  teamInUse,
  usersNamed,
  type TeamCreate,
  type TeamDeleteReads,
  type TeamUpdate,
  type TeamUpdateReads,
} from '#shared/domain/teams/decide.ts';
import { subteamsOf, teamEntity, teamsByExternalId, type TeamRecord } from '#shared/domain/teams/entity.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import { ConcurrentUpdateError, NotFoundError } from '#shared/errors.ts';

const notFound = (id: string) => new NotFoundError('Team', id);

/** The team for GET /teams/{id} (and SCIM's Groups): 404 when it is not in the caller's tenant. */
export const getTeam = entityShow(teamEntity, notFound);

// ---------- reads ----------

/** The teams whose SCIM externalId is `externalId` (exactly), from its entry list. */
export async function findTeamsByExternalId(ctx: DomainCtx, externalId: string): Promise<TeamRecord[]> {
  const ids: string[] = [];
  for await (const e of entriesOf(ctx, teamsByExternalId, externalId)) ids.push(e.id);
  // the index lags the table a little: a record is returned only while it still says so
  return (await ctx.loader.many(teamEntity, ids)).filter((t) => t.scim_external_id === externalId);
}

/** The users of the tenant among those the command names (one read for owners and members). */
async function knownUsers(ctx: DomainCtx, cmd: TeamUpdate): Promise<Set<string>> {
  return new Set((await ctx.loader.many(userEntity, usersNamed(cmd))).map((u) => u.uuid));
}

/** The first `max` entries of a GSI1 partition accepted by `accept` (Queries of 100 keys, so stopping early reads little). */
async function firstEntries(
  ctx: DataCtx,
  partition: string,
  max: number,
  accept: (e: ListEntry) => boolean = () => true,
): Promise<ListEntry[]> {
  const out: ListEntry[] = [];
  for await (const e of partitionEntries(ctx, partition, { pageSize: 100 })) {
    if (!accept(e)) continue;
    out.push(e);
    if (out.length >= max) break;
  }
  return out;
}

const childrenPartition = (ctx: DataCtx, teamUuid: string) => entryPartitionOf(ctx, subteamsOf, teamUuid);

/** The descendants of a team (any status), breadth first; stopped past `cap` (overflow: they must all fit one write). */
async function descendants(ctx: DataCtx, rootUuid: string, cap: number): Promise<Array<Stored<TeamRecord>> | undefined> {
  const out: Array<Stored<TeamRecord>> = [];
  let frontier = [rootUuid];
  while (frontier.length) {
    const childIds: string[] = [];
    for (const parent of frontier) {
      childIds.push(...(await firstEntries(ctx, childrenPartition(ctx, parent), cap + 1)).map((e) => e.id));
      if (out.length + childIds.length > cap) return undefined;
    }
    const found = await getEntities(ctx, teamEntity, childIds);
    const children = childIds.map((id) => found.get(id)).filter((s): s is Stored<TeamRecord> => !!s);
    out.push(...children);
    frontier = children.map((c) => c.record.uuid);
  }
  return out;
}

/** `team` and its ancestors, nearest first, read consistently with their versions (stops on a loop, or past what a write can hold: undefined). */
async function ancestry(ctx: DataCtx, teamUuid: string): Promise<Array<Stored<TeamRecord>> | undefined> {
  const chain: Array<Stored<TeamRecord>> = [];
  for (let id: string | null = teamUuid; id && !chain.some((s) => s.record.uuid === id); ) {
    const s: Stored<TeamRecord> | undefined = await getEntity(ctx, teamEntity, id, true);
    if (!s) break;
    chain.push(s);
    if (chain.length > MAX_TX_ITEMS) return undefined;
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

/** The refusal of a transaction past DynamoDB's limit, answered before anything is sent. */
function assertFits(tx: WriteTx, field: string | undefined): void {
  const refusal = fitsRefusal(tx.size, field);
  if (refusal) throw refusal;
}

/** Admins only. Under a parent, the parent is touched in the same transaction (header comment). */
export async function createTeam(ctx: DomainCtx, input: TeamCreate): Promise<TeamRecord> {
  const uuid = newId();
  let users: Set<string> | undefined; // read once: who exists does not change what a retry conflicts on
  return runCommand(ctx, {
    precheck: () => teamCreateRefusal(ctx.caller),
    read: async () => {
      users ??= await knownUsers(ctx, input);
      const parent = input.parent_uuid ? await getEntity(ctx, teamEntity, input.parent_uuid, true) : undefined;
      return { users, parent };
    },
    decide: (read, now) => decideCreateTeam(ctx.caller, input, { users: read.users, parent: read.parent?.record }, now, uuid),
    write: (tx, record, read) => {
      tx.create(teamEntity, record);
      if (read.parent) tx.touch(teamEntity, read.parent);
      assertFits(tx, 'member_uuids');
      return record;
    },
    stored: orStored(teamEntity, uuid, (stored) => stored),
  });
}

/** The team, then (unless planTeamUpdate refuses at once) the users named, the new parent's chain and, on a move, the subtree. */
async function readTeamUpdate(ctx: DomainCtx, id: string, input: TeamUpdate) {
  const current = await getEntity(ctx, teamEntity, id, true);
  if (!current) return undefined;
  const plan = planTeamUpdate(ctx.caller, current.record, input);
  if ('error' in plan) return { current, chain: [], reads: { users: new Set<string>(), parentChain: [] } };
  const [users, chain] = await Promise.all([
    knownUsers(ctx, input),
    plan.write.parent && plan.write.parent !== id ? ancestry(ctx, plan.write.parent) : [],
  ]);
  // the moved team's subtree moves with it, in the same transaction as the chain held
  const below = plan.write.moving && chain ? await descendants(ctx, id, MAX_TX_ITEMS - chain.length) : [];
  const reads: TeamUpdateReads = {
    users,
    parentChain: (chain ?? []).map((s) => s.record),
    chainOverflow: !chain,
    below: below ? { items: below.map((s) => s.record) } : { overflow: true },
  };
  return { current, chain: chain ?? [], below: below ?? [], reads };
}

export async function updateTeam(ctx: DomainCtx, id: string, input: TeamUpdate): Promise<TeamRecord> {
  return runCommand(ctx, {
    read: () => readTeamUpdate(ctx, id, input),
    decide: (s, now) => (s ? decideUpdateTeam(ctx.caller, s.current.record, input, s.reads, now) : refuse(notFound(id))),
    write: (tx, { team, below }, s) => {
      holdChain(tx, s!.chain);
      replaceAll(tx, s!.below ?? [], below);
      tx.replace(teamEntity, s!.current, team);
      assertFits(tx, team.parent_uuid !== s!.current.record.parent_uuid ? 'parent_uuid' : 'member_uuids');
      return team;
    },
  });
}

/** The goals a delete names as dependents: at most MAX_DEPENDENTS_NAMED of each kind, in the order read. */
const goalsOf = (found: ReferenceEntry[]) => {
  const live = found.filter((r) => r.state !== 'discarded');
  return live
    .filter((r) => live.filter((o) => o.list === r.list).indexOf(r) < MAX_DEPENDENTS_NAMED)
    .map((r) => ({ kind: r.list, uuid: r.id }));
};

/**
 * Read plan of a delete, each step only while nothing read so far refuses (decideDeleteTeam): one read of the
 * sub-teams serves both the dependents check (index state) and the detaching; the goals read here name the
 * dependents, the delete itself reads them again after marking the team. Then the sub-teams' records and
 * everything under each, bounded by the delete's one transaction.
 */
async function readTeamDelete(ctx: DomainCtx, id: string) {
  const current = await getEntity(ctx, teamEntity, id, true);
  if (!current) return undefined;
  const reads: TeamDeleteReads = {};
  const read = { current, reads, subTeams: [] as Array<Stored<TeamRecord>>, below: [] as Array<Stored<TeamRecord>> };
  if (teamDeleteRefusal(ctx.caller)) return read;
  const [children, refs] = await Promise.all([
    firstEntries(ctx, childrenPartition(ctx, id), MAX_TX_ITEMS + 1),
    referencesTo(ctx, teamEntity.type, id),
  ]);
  reads.found = { subTeams: children.map((e) => ({ uuid: e.id, status: e.state })), goals: goalsOf(refs) };
  if (dependentsRefusal(reads.found)) return read;
  read.subTeams = [
    ...(
      await getEntities(
        ctx,
        teamEntity,
        children.map((e) => e.id),
      )
    ).values(),
  ];
  reads.subTeams = read.subTeams.map((s) => s.record);
  if (activeSubTeamRefusal(reads.subTeams)) return read;
  const below: Array<[string, TeamRecord[]]> = [];
  let budget = MAX_TX_ITEMS - new WriteTx(ctx).remove(teamEntity, current).size - read.subTeams.length;
  for (const child of read.subTeams) {
    const under = await descendants(ctx, child.record.uuid, budget);
    if (!under) return { ...read, reads: { ...reads, below: { overflow: true as const } } };
    below.push([child.record.uuid, under.map((s) => s.record)]);
    read.below.push(...under);
    budget -= under.length;
  }
  reads.below = { items: below };
  return read;
}

/**
 * Admins only; returns the deleted record. Refused (422 has_dependents) while an active sub-team or a
 * non-discarded goal references the team; archived sub-teams are detached in the same transaction (see
 * decide.ts). When all of that does not fit one transaction, the delete is refused with 422 too_many.
 * Goals' references are held in the team's partition: the store's removeUnreferenced (mark, consistent read
 * of the references, delete; it commits itself) lets no racing goal create slip through (docs/data-model.md).
 * A lost race (a child attached, a sub-team changed meanwhile) re-reads and re-checks everything.
 */
export async function deleteTeam(ctx: DomainCtx, id: string): Promise<TeamRecord> {
  return runCommand(ctx, {
    read: () => readTeamDelete(ctx, id),
    decide: (s, now) => (s ? decideDeleteTeam(ctx.caller, s.reads, now) : refuse(notFound(id))),
    write: async (_tx, detached, s) => {
      await removeUnreferenced(ctx, teamEntity, s!.current, {
        onReferenced: (found) => teamInUse({ subTeams: [], goals: goalsOf(found) }) ?? new ConcurrentUpdateError(),
        also: (tx) => {
          replaceAll(tx, [...s!.subTeams, ...s!.below], detached);
          assertFits(tx, undefined);
        },
      });
      return s!.current.record;
    },
  });
}

/** Owners update but do not delete their team (decide.ts). */
export const teamChecks = (ctx: DomainCtx, t: TeamRecord): Checks => ({
  can_update: isAdmin(ctx.caller) || managesTeam(ctx.caller, t),
  can_delete: isAdmin(ctx.caller),
});

export const teamAccessSource = (ctx: DomainCtx, t: TeamRecord): AccessSource =>
  isAdmin(ctx.caller) ? 'admin' : t.owner_uuids.includes(ctx.caller.userId) ? 'owner' : 'public';

export const teamCollectionChecks = (ctx: DomainCtx): Checks => ({ can_create: isAdmin(ctx.caller) });
