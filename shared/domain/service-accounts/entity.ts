import type { GrantableScope } from '#shared/auth/scopes.ts';
import type { BaseRecord, EntityDef } from '#shared/db/model.ts';
import { newUserRecord, type UserRecord } from '#shared/domain/users/entity.ts';

export const SERVICE_ACCOUNT_STATUSES = ['active', 'disabled'] as const;
export type ServiceAccountStatus = (typeof SERVICE_ACCOUNT_STATUSES)[number];

/**
 * A machine credential of one tenant (contract section 17). Its secret is stored only as a slow hash
 * (shared/auth/client-secret.ts); `client_id` names the tenant and the account, so the token endpoint, which
 * has no token to learn the tenant from, finds the account with one read.
 */
export interface ServiceAccountRecord extends BaseRecord {
  name: string;
  scopes: GrantableScope[];
  status: ServiceAccountStatus;
  client_id: string;
  secret_hash: string;
  creator_uuid: string;
  secret_rotated_at: string;
}

export const serviceAccountEntity: EntityDef<ServiceAccountRecord> = {
  type: 'service_account',
  envelope: (a) => ({ state: a.status }),
};

const hex = (uuid: string) => uuid.replaceAll('-', '');
const dashed = (h: string) => `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;

/** `sa_` + the tenant's and the account's uuids as hex: public, like a user name. */
export const clientIdOf = (tenantId: string, accountUuid: string) => `sa_${hex(tenantId)}${hex(accountUuid)}`;

const CLIENT_ID_RE = /^sa_([0-9a-f]{32})([0-9a-f]{32})$/;

/** The tenant and account a client_id names, or undefined for anything not shaped as one. */
export function parseClientId(clientId: string): { tenantId: string; accountUuid: string } | undefined {
  const m = CLIENT_ID_RE.exec(clientId);
  return m ? { tenantId: dashed(m[1]!), accountUuid: dashed(m[2]!) } : undefined;
}

/**
 * The account as the user it acts as: an admin, active while the account is, named by its name. For what reads the
 * acting user (a notice's actor, a webhook's creator); never stored, never listed as a user.
 */
export const serviceAccountAsUser = (a: ServiceAccountRecord): UserRecord =>
  newUserRecord(
    {
      email: `${a.client_id}@service-accounts.invalid`,
      display_name: a.name,
      role: 'admin',
      status: a.status === 'active' ? 'active' : 'inactive',
      creator_uuid: a.creator_uuid,
      display_name_source: 'service_account',
    },
    a.created_at,
    a.uuid,
  );
