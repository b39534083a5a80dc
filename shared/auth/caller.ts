import type { UserRecord, Role } from '#shared/domain/users/entity.ts';

/** The authenticated caller, resolved from the JWT claims and the user's own record. */
export interface Caller {
  tenantId: string;
  userId: string;
  role: Role;
  user: UserRecord;
}

export const isAdmin = (c: Caller) => c.role === 'admin';
/** Viewers write only access requests and connector requests (contract section 5). */
export const canWriteContent = (c: Caller) => c.role !== 'viewer';
