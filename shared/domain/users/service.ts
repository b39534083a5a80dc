import { isAdmin } from '#shared/auth/caller.ts';
import { newId } from '#shared/ids.ts';
import type { AccessSource, Checks } from '#shared/auth/permissions.ts';
import { orStored, runCommand } from '#shared/db/commands.ts';
import type { Stored } from '#shared/db/model.ts';
import { entriesOf } from '#shared/db/index-queries.ts';
import { findUnique, getEntity } from '#shared/db/reads.ts';
import { refuse } from '#shared/decision.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import {
  changesManager,
  decideCreateUser,
  decideUpdateUser,
  MAX_MANAGER_CHAIN,
  updateNeedsExistenceProbe,
  updateRefusal,
  userCreateRefusal,
  userNotFound,
  type UserCreate,
  type UserUpdate,
} from '#shared/domain/users/decide.ts';
import { normalizeEmail, userEntity, usersByExternalId, type UserRecord } from '#shared/domain/users/entity.ts';

/** User commands: read, decide (decide.ts, where the rules are), write once. */

export async function getUser(ctx: DomainCtx, id: string): Promise<UserRecord> {
  const user = await ctx.loader.one(userEntity, id);
  if (!user) throw userNotFound(id);
  return user;
}

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

export async function createUser(ctx: DomainCtx, input: UserCreate): Promise<UserRecord> {
  const uuid = newId();
  return runCommand(ctx, {
    precheck: () => userCreateRefusal(ctx.caller),
    read: async () => (input.manager_uuid ? await ctx.loader.one(userEntity, input.manager_uuid) : undefined),
    decide: (manager, now) => decideCreateUser(ctx.caller, input, manager, now, uuid),
    write: (tx, record) => (tx.create(userEntity, record), record),
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
 * concurrent changes cannot close a management cycle.
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
      const current = await getEntity(ctx, userEntity, id, true);
      return current && { current, chain: changesManager(current.record, input) ? await managerChain(ctx, input.manager_uuid) : undefined };
    },
    decide: (s, now) =>
      s
        ? decideUpdateUser(
            s.current.record,
            input,
            s.chain?.map((c) => c.record),
            now,
          )
        : refuse(userNotFound(id)),
    write: (tx, next, s) => {
      for (const c of s!.chain ?? []) tx.checkVersion(userEntity, c);
      tx.replace(userEntity, s!.current, next);
      return next;
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
