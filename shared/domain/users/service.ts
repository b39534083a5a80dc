import { isAdmin } from '#shared/auth/caller.ts';
import { newId } from '#shared/ids.ts';
import type { AccessSource, Checks } from '#shared/auth/permissions.ts';
import { orStored, runCommand } from '#shared/command/run.ts';
import type { Stored } from '#shared/db/model.ts';
import { entriesOf } from '#shared/db/index-queries.ts';
import { BatchRead, findUnique, getEntity } from '#shared/db/reads.ts';
import { accept, refuse, type Decision } from '#shared/decision.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { entityShow } from '#shared/domain/entity-show.ts';
import { activeAdminsKey, activeAdminsOf, writeActiveAdmins } from '#shared/domain/users/admins.ts';
import {
  changesManager,
  decideActiveAdmins,
  decideCreateUser,
  decideUpdateUser,
  isActiveAdmin,
  lastAdminField,
  MAX_MANAGER_CHAIN,
  mayMoveAdmins,
  movesAdmins,
  updateNeedsExistenceProbe,
  updateRefusal,
  userCreateRefusal,
  userNotFound,
  type UserCreate,
  type UserUpdate,
} from '#shared/domain/users/decide.ts';
import { normalizeEmail, userEntity, usersByExternalId, type UserRecord } from '#shared/domain/users/entity.ts';

/** User commands: read, decide (decide.ts, where the rules are), write once. */

/** The user for GET /users/{id} (and SCIM's Users): 404 when it is not in the caller's tenant. */
export const getUser = entityShow(userEntity, userNotFound);

/** The user holding an e-mail address (any letter case), through its uniqueness claim: one read. */
export async function findUserByEmail(ctx: DomainCtx, email: string): Promise<UserRecord | undefined> {
  const id = await findUnique(ctx, 'email', normalizeEmail(email));
  return id ? ctx.loader.one(userEntity, id) : undefined;
}

/** The users whose SCIM externalId is `externalId` (exactly), from its entry list. */
export async function findUsersByExternalId(ctx: DomainCtx, externalId: string): Promise<UserRecord[]> {
  const ids: string[] = [];
  for await (const e of entriesOf(ctx, usersByExternalId, externalId)) ids.push(e.id);
  // the index lags the table a little: a record is returned only while it still says so
  return (await ctx.loader.many(userEntity, ids)).filter((u) => u.scim_external_id === externalId);
}

/** A user write: the user, and the tenant's active admins when it changes them. */
interface UserWrite {
  user: UserRecord;
  admins: string[] | undefined;
}

/** The user with the admins' decision (undefined: not read, so unchanged): its refusal, or both to write. */
const withAdmins = (user: UserRecord, admins: Decision<string[] | undefined> | undefined): Decision<UserWrite> =>
  admins && 'error' in admins ? admins : accept({ user, admins: admins?.write });

/** The users this request read itself, for a tenant's first build of its active admins (activeAdminsOf): the calling user too. */
const knownUsers = (ctx: DomainCtx, ...users: UserRecord[]) => (ctx.caller.service ? users : [...users, ctx.caller.user]);

/**
 * A create reads the manager it names and, for a new active admin, the tenant's active admins (one BatchGetItem),
 * and writes the user with them (decideActiveAdmins).
 */
export async function createUser(ctx: DomainCtx, input: UserCreate): Promise<UserRecord> {
  const uuid = newId();
  const addsAdmin = isActiveAdmin({ role: input.role ?? 'member', status: input.status ?? 'active' });
  return runCommand(ctx, {
    precheck: () => userCreateRefusal(ctx.caller),
    read: async () => {
      if (!input.manager_uuid && !addsAdmin) return { manager: undefined, admins: undefined };
      const batch = new BatchRead(ctx);
      const manager = input.manager_uuid ? batch.entities(userEntity, [input.manager_uuid]) : undefined;
      const admins = addsAdmin ? batch.side(activeAdminsKey(ctx.tenantId)) : undefined;
      await batch.run();
      return {
        manager: input.manager_uuid ? manager?.().get(input.manager_uuid)?.record : undefined,
        admins: admins ? await activeAdminsOf(ctx, admins(), knownUsers(ctx)) : undefined,
      };
    },
    decide: (s, now): Decision<UserWrite> => {
      const user = decideCreateUser(ctx.caller, input, s.manager, now, uuid);
      if ('error' in user) return user;
      return withAdmins(user.write, s.admins && decideActiveAdmins(s.admins.uuids, undefined, user.write, 'role'));
    },
    write: (tx, next, s) => {
      tx.create(userEntity, next.user);
      if (next.admins) writeActiveAdmins(tx, ctx.tenantId, s.admins!, next.admins);
      return next.user;
    },
    stored: orStored(userEntity, uuid, (stored) => stored),
  });
}

/** `managerUuid` and its managers, nearest first, read consistently with their versions (stops on a loop or one past the bound). */
async function managerChain(ctx: DomainCtx, managerUuid: string): Promise<Array<Stored<UserRecord>>> {
  const chain: Array<Stored<UserRecord>> = [];
  const seen = new Set<string>();
  for (let id: string | null = managerUuid; id && !seen.has(id) && chain.length <= MAX_MANAGER_CHAIN; ) {
    seen.add(id);
    const s: Stored<UserRecord> | undefined = await getEntity(ctx, userEntity, id, true);
    if (!s) break;
    chain.push(s);
    id = s.record.manager_uuid;
  }
  return chain;
}

/**
 * A manager change is written with every user of the new manager's chain version-checked in the same
 * transaction: a concurrent change anywhere on that chain makes one of the two writes fail and re-read, so
 * concurrent changes cannot close a management cycle. An update that sends a role or a status reads the tenant's
 * active admins beside the user (one BatchGetItem) and, when it moves the user in or out of them, writes them in
 * the same transaction, conditioned on the version read: the last active admin is never demoted or deactivated
 * (409 last_admin), however many such updates run at once and whichever door sends them (REST, SCIM, a token).
 */
export async function updateUser(ctx: DomainCtx, id: string, input: UserUpdate): Promise<UserRecord> {
  return runCommand(ctx, {
    // who may send this update is answered before the user is read (only whether it exists, for a non-admin)
    precheck: async () =>
      updateRefusal(
        ctx.caller,
        id,
        input,
        updateNeedsExistenceProbe(ctx.caller, id) ? { exists: !!(await getEntity(ctx, userEntity, id)) } : undefined,
      ),
    read: async () => {
      const batch = new BatchRead(ctx);
      const user = batch.entities(userEntity, [id]);
      const adminsItem = mayMoveAdmins(input) ? batch.side(activeAdminsKey(ctx.tenantId)) : undefined;
      await batch.run();
      const current = user().get(id);
      if (!current) return undefined;
      const chain = changesManager(current.record, input) ? await managerChain(ctx, input.manager_uuid) : undefined;
      const admins =
        adminsItem && movesAdmins(current.record, input)
          ? await activeAdminsOf(ctx, adminsItem(), knownUsers(ctx, current.record))
          : undefined;
      return { current, chain, admins };
    },
    decide: (s, now): Decision<UserWrite> => {
      if (!s) return refuse(userNotFound(id));
      const user = decideUpdateUser(
        s.current.record,
        input,
        s.chain?.map((c) => c.record),
        now,
      );
      if ('error' in user) return user;
      return withAdmins(user.write, s.admins && decideActiveAdmins(s.admins.uuids, s.current.record, user.write, lastAdminField(input)));
    },
    write: (tx, next, s) => {
      for (const c of s!.chain ?? []) tx.checkVersion(userEntity, c);
      tx.replace(userEntity, s!.current, next.user);
      if (next.admins) writeActiveAdmins(tx, ctx.tenantId, s!.admins!, next.admins);
      return next.user;
    },
  });
}

export function userChecks(ctx: DomainCtx, u: UserRecord): Checks {
  const admin = isAdmin(ctx.caller);
  const self = u.uuid === ctx.caller.userId && ctx.caller.role !== 'viewer';
  return { can_update: admin || self, can_update_role: admin, can_update_status: admin };
}

export const userAccessSource = (ctx: DomainCtx): AccessSource => (isAdmin(ctx.caller) ? 'admin' : 'public');
export const userCollectionChecks = (ctx: DomainCtx): Checks => ({ can_create: isAdmin(ctx.caller) });
