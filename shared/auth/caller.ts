import type { UserRecord, Role } from '#shared/domain/users/entity.ts';

/** The authenticated caller, resolved from the JWT claims and the user's own record. */
export interface Caller {
  tenantId: string;
  userId: string;
  role: Role;
  user: UserRecord;
  /**
   * Set when the token is a service account's (contract section 17): `userId` is the account's uuid (so its writes
   * are attributed to it), `role` is admin, narrowed by `scopes` at each route, and `user` a stand-in carrying the
   * account's name.
   */
  service?: { name: string; clientId: string };
  /**
   * A service account's token: the scopes it acts with, those of its `scope` claim that the account still holds as
   * read in this request (contract section 19: narrowing an account narrows the tokens already issued). The route's
   * scope was checked against them before the caller was admitted; a door that checks further scopes per operation
   * (an MCP tool call) checks them against these. Absent for a user's token, whose claim is the whole story.
   */
  scopes?: ReadonlySet<string>;
}

export const isAdmin = (c: Caller) => c.role === 'admin';
/** Viewers write only access requests and connector requests (contract section 5). */
export const canWriteContent = (c: Caller) => c.role !== 'viewer';
