import type { UserRecord, Role } from '#shared/domain/users/entity.ts';

/** The authenticated caller, resolved from the JWT claims and the user's own record. */
export interface Caller {
  tenantId: string;
  userId: string;
  role: Role;
  user: UserRecord;
  /**
   * Set when the token is a service account's (contract section 17): `userId` is the account's uuid (so its writes
   * are attributed to it), `role` is admin, narrowed by the token's scopes at each route (scopeCheck), and `user`
   * a stand-in carrying the account's name.
   */
  service?: { name: string; clientId: string };
}

export const isAdmin = (c: Caller) => c.role === 'admin';
/** Viewers write only access requests and connector requests (contract section 5). */
export const canWriteContent = (c: Caller) => c.role !== 'viewer';
