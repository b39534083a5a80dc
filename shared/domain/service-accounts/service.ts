import { sleep } from '#shared/clock.ts';
import { hashClientSecret, newClientSecret, UNKNOWN_CLIENT_HASH, verifyClientSecret } from '#shared/auth/client-secret.ts';
import type { AccessSource, Checks } from '#shared/auth/permissions.ts';
import { orStored, runCommand } from '#shared/command/run.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { entityShow } from '#shared/domain/entity-show.ts';
import {
  decideCreateServiceAccount,
  decideRotateSecret,
  decideTokenGrant,
  decideUpdateServiceAccount,
  serviceAccountAdminRefusal,
  tokenIssuableInMs,
  type OAuthRefusal,
  type ServiceAccountCreateInput,
  type ServiceAccountUpdateInput,
} from '#shared/domain/service-accounts/decide.ts';
import { clientIdOf, serviceAccountEntity, type ServiceAccountRecord } from '#shared/domain/service-accounts/entity.ts';
import { accept, refuse } from '#shared/decision.ts';
import { NotFoundError } from '#shared/errors.ts';
import { newId } from '#shared/ids.ts';

/*
 * Service accounts (contract section 17): admin users only, in every verb. The secret is returned by the create
 * and by rotate_secret, once each, and stored only as a slow hash.
 */

const notFound = (id: string) => new NotFoundError('Service account', id);

/** Admin users only (serviceAccountAdminRefusal), thrown: the reads' gate and a replayed create's or rotation's. */
export function checkServiceAccountAdmin(ctx: Pick<DomainCtx, 'caller'>): void {
  const refusal = serviceAccountAdminRefusal(ctx.caller);
  if (refusal) throw refusal;
}

export async function createServiceAccount(
  ctx: DomainCtx,
  input: ServiceAccountCreateInput,
): Promise<{ record: ServiceAccountRecord; secret: string }> {
  const uuid = newId();
  const clientId = clientIdOf(ctx.tenantId, uuid);
  const secret = newClientSecret();
  let secretHash = ''; // hashed once the caller may create one (the precheck): every attempt writes the same
  return runCommand(ctx, {
    precheck: async () => {
      const refusal = serviceAccountAdminRefusal(ctx.caller);
      if (!refusal) secretHash = await hashClientSecret(secret);
      return refusal;
    },
    read: async () => undefined,
    decide: (_s, now) => decideCreateServiceAccount(ctx.caller, input, now, { uuid, clientId, secretHash }),
    write: (tx, record) => (tx.create(serviceAccountEntity, record), { record, secret }),
    // A replay under the same Idempotency-Key finds the account stored: the secret it showed is not kept, so a
    // new one replaces it (the sealed replay normally answers before this runs).
    stored: orStored(serviceAccountEntity, uuid, async (stored) => ({
      record: stored,
      secret: await rotateSecret(ctx, stored.uuid).then((r) => r.secret),
    })),
  });
}

/** The service account for GET /service_accounts/{id}: admins only (403 first), 404 when it is not in the caller's tenant. */
export const showServiceAccount = entityShow(serviceAccountEntity, notFound, { byKey: true, mayRead: checkServiceAccountAdmin });

export async function updateServiceAccount(ctx: DomainCtx, id: string, input: ServiceAccountUpdateInput): Promise<ServiceAccountRecord> {
  return runCommand(ctx, {
    precheck: () => serviceAccountAdminRefusal(ctx.caller),
    read: () => getEntity(ctx, serviceAccountEntity, id, true),
    decide: (current, now) => (current ? decideUpdateServiceAccount(current.record, input, now) : refuse(notFound(id))),
    write: (tx, next, current) => (tx.replace(serviceAccountEntity, current!, next), next),
  });
}

export async function rotateSecret(ctx: DomainCtx, id: string): Promise<{ record: ServiceAccountRecord; secret: string }> {
  const secret = newClientSecret();
  let secretHash = '';
  return runCommand(ctx, {
    precheck: async () => {
      const refusal = serviceAccountAdminRefusal(ctx.caller);
      if (!refusal) secretHash = await hashClientSecret(secret);
      return refusal;
    },
    read: () => getEntity(ctx, serviceAccountEntity, id, true),
    decide: (current, now) => (current ? decideRotateSecret(current.record, secretHash, now) : refuse(notFound(id))),
    write: (tx, next, current) => (tx.replace(serviceAccountEntity, current!, next), { record: next, secret }),
  });
}

export async function deleteServiceAccount(ctx: DomainCtx, id: string): Promise<ServiceAccountRecord> {
  return runCommand(ctx, {
    precheck: () => serviceAccountAdminRefusal(ctx.caller),
    read: () => getEntity(ctx, serviceAccountEntity, id, true),
    // nothing refuses a delete an admin sends for an account that exists
    decide: (current) => (current ? accept(current.record) : refuse(notFound(id))),
    write: (tx, record, current) => (tx.remove(serviceAccountEntity, current!), record),
  });
}

/**
 * The client credentials grant's check (RFC 6749 section 4.4): the account `accountUuid` of the tenant `ctx`
 * (read strongly: a rotation or a disable just made counts), its secret checked against the stored hash, or
 * against a hash nothing matches when the account is unknown, so both cost the same scrypt run. Granted, it
 * returns once a token signed now is not older than the account's last rotation (tokenIssuableInMs).
 */
export async function grantClientCredentials(
  ctx: DataCtx,
  accountUuid: string,
  secret: string,
  requestedScope: string | undefined,
): Promise<{ account: ServiceAccountRecord; scopes: string[] } | OAuthRefusal> {
  const account = (await getEntity(ctx, serviceAccountEntity, accountUuid, true))?.record;
  const matches = await verifyClientSecret(secret, account?.secret_hash ?? UNKNOWN_CLIENT_HASH);
  const outcome = decideTokenGrant(account, matches, requestedScope);
  if ('error' in outcome) return outcome;
  // A token's `iat` is in whole seconds: one asked for within the second of a rotation waits for the next second
  // (at most 1 s), so that it is not refused as one issued before the rotation (decideServiceToken).
  const wait = tokenIssuableInMs(account!, Date.now());
  if (wait > 0) await sleep(wait);
  return { account: account!, scopes: outcome.scopes };
}

export const serviceAccountChecks = (ctx: DomainCtx): Checks => {
  const allowed = !serviceAccountAdminRefusal(ctx.caller);
  return { can_update: allowed, can_delete: allowed };
};
export const serviceAccountAccessSource: AccessSource = 'admin';
export const serviceAccountCollectionChecks = (ctx: DomainCtx): Checks => ({ can_create: !serviceAccountAdminRefusal(ctx.caller) });
