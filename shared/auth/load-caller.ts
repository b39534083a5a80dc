import type { Caller } from '#shared/auth/caller.ts';
import type { Db } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { partitionEntries } from '#shared/db/index-queries.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity, readEntitiesAhead, type EntityRef } from '#shared/db/reads.ts';
import type { CreatorKind } from '#shared/domain/integrations/entity.ts';
import {
  decideServiceCreator,
  decideServiceToken,
  type ServiceCreator,
  type ServiceToken,
} from '#shared/domain/service-accounts/decide.ts';
import { serviceAccountAsUser, serviceAccountEntity, type ServiceAccountRecord } from '#shared/domain/service-accounts/entity.ts';
import { userEntity, type Role } from '#shared/domain/users/entity.ts';
import { UnauthorizedError } from '#shared/errors.ts';

/** Uuids of the teams the caller belongs to (as member or owner), read once per request when needed. */
export async function callerTeamUuids(ctx: DataCtx & { db: Db }, userId: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const e of partitionEntries(ctx, keys.entryList(ctx.tenantId, 'team', 'member', userId)))
    if (e.state !== 'archived') ids.add(e.id);
  return ids;
}

/**
 * The caller's user and the entities the route reads first (`readAhead`), in one BatchGetItem; with `teams`,
 * the caller's team list is queried alongside (one round trip in sequence). 401 when the user is unknown or
 * not active. `data` is the token's tenant (its keys are built under it, so a read-ahead never leaves it); the
 * items read ahead (strongly consistent) are put on it for later reads by id. `service`: the token is a service
 * account's, `userId` the account's uuid, and what the token presents (loadServiceCaller), or, with no token, the
 * scope of what a data source it created writes (loadSourceCreator).
 */
export async function loadCaller(
  data: DataCtx & { db: Db },
  userId: string,
  opts:
    | { readAhead?: EntityRef[]; teams?: boolean; service?: false }
    | { readAhead?: EntityRef[]; teams?: boolean; service: ServiceToken | ServiceCreator } = {},
): Promise<{ caller: Caller; teams?: Promise<Set<string>> }> {
  if (opts.service) return { caller: await loadServiceCaller(data, userId, opts.readAhead ?? [], opts.service) };
  const who = `${data.tenantId}/${userId}`;
  // an admin's teams decide nothing: not queried ahead for a caller this container last saw as admin
  const teams = opts.teams && rolesSeen.get(who) !== 'admin' ? callerTeamUuids(data, userId) : undefined;
  teams?.catch(() => {}); // awaited by the handler, if it gets that far
  data.readAhead = await readEntitiesAhead(data, [{ type: userEntity.type, id: userId }, ...(opts.readAhead ?? [])]);
  const user = await getEntity(data, userEntity, userId);
  if (user?.record.status !== 'active') throw new UnauthorizedError('User is unknown or inactive');
  rememberRole(who, user.record.role);
  return { caller: { tenantId: data.tenantId, userId, role: user.record.role, user: user.record }, ...(teams ? { teams } : {}) };
}

/**
 * A data source's creator as the caller of its push (contract 16), as it is now, by the kind recorded on the source
 * (a source from before the kind was kept: a user): a user must be active; a service account must be active and still
 * hold `needs`, the scope of the check-in the source writes, among its scopes of now (no token presents any). 401
 * otherwise, for either kind, as the caller's read refuses any request.
 */
export function loadSourceCreator(
  data: DataCtx & { db: Db },
  creator: { uuid: string; kind: CreatorKind },
  needs: string,
  opts: { readAhead?: EntityRef[]; teams?: boolean } = {},
): Promise<{ caller: Caller; teams?: Promise<Set<string>> }> {
  const service: ServiceCreator = { creatorNeeds: needs };
  return creator.kind === 'service_account'
    ? loadCaller(data, creator.uuid, { ...opts, service })
    : loadCaller(data, creator.uuid, { ...opts, service: false });
}

/**
 * The role each caller had when this container last read its user, only to choose what to read ahead: a
 * stale entry costs a round trip (the teams read on first use) or a call, never a wrong answer, since every
 * decision takes the role from the user item read in the same request.
 */
const rolesSeen = new Map<string, Role>();
const ROLES_REMEMBERED = 10_000;

function rememberRole(who: string, role: Role): void {
  rolesSeen.delete(who); // re-inserted last: the oldest entry goes first
  rolesSeen.set(who, role);
  if (rolesSeen.size > ROLES_REMEMBERED) rolesSeen.delete(rolesSeen.keys().next().value!);
}

/**
 * A service account's token (contract sections 17 and 19): the account is read on every call, in the same
 * BatchGetItem as what the route reads ahead (no cache, so no extra round trip and no delay), and the token acts
 * with the account as it is now: disabled or deleted, or rotated since the token was issued, its tokens are
 * refused at once (401); its scopes are those of the token the account still holds, and the route's scope must be
 * one of them (403 insufficient_scope; decideServiceToken). This is the function's own check of the narrowed
 * scopes: the gateway's authorizer and scopeCheck see the token's claim only. A data source's push presents no
 * token: the account, as its creator, acts with its own scopes of now (decideServiceCreator).
 */
async function loadServiceCaller(
  data: DataCtx & { db: Db },
  accountUuid: string,
  readAhead: EntityRef[],
  presented: ServiceToken | ServiceCreator,
): Promise<Caller> {
  data.readAhead = await readEntitiesAhead(data, [{ type: serviceAccountEntity.type, id: accountUuid }, ...readAhead]);
  const account = (await getEntity(data, serviceAccountEntity, accountUuid))?.record;
  if ('creatorNeeds' in presented) {
    const admitted = decideServiceCreator(account, presented.creatorNeeds);
    if ('error' in admitted) throw admitted.error;
    return serviceAccountCaller(data.tenantId, account!, admitted.scopes);
  }
  if (account?.status !== 'active') throw new UnauthorizedError('Service account is unknown or disabled');
  const admitted = decideServiceToken(account, presented);
  if ('error' in admitted) throw admitted.error;
  return serviceAccountCaller(data.tenantId, account, admitted.scopes);
}

/**
 * A service account as the caller: an admin under its own uuid (its writes are attributed to it), narrowed by
 * `scopes`; `user` is a stand-in with its name, for what shows the acting user's name (a notification's actor).
 */
export const serviceAccountCaller = (tenantId: string, account: ServiceAccountRecord, scopes: ReadonlySet<string>): Caller => ({
  tenantId,
  userId: account.uuid,
  role: 'admin',
  user: serviceAccountAsUser(account),
  service: { name: account.name, clientId: account.client_id },
  scopes,
});
