import { isAdmin, canWriteContent, type Caller } from '#shared/auth/caller.ts';
import { ForbiddenError } from '#shared/errors.ts';

/** What the caller may do with a record (or, on lists, with the collection). */
export type Checks = Record<string, boolean>;
/** Why the caller can see a record (contract section 2). */
export type AccessSource = 'admin' | 'owner' | 'creator' | 'delegate' | 'team' | 'visible_entity' | 'public';

export function requireAdmin(caller: Caller, what = 'Only admins can do this'): void {
  if (!isAdmin(caller)) throw new ForbiddenError(what);
}

export function requireContentWriter(caller: Caller): void {
  if (!canWriteContent(caller)) throw new ForbiddenError('Viewers cannot change content');
}

/** Directory resources (time periods): everyone reads, admins write. Teams compute their own (owners update). */
export function directoryChecks(caller: Caller): Checks {
  const admin = isAdmin(caller);
  return { can_update: admin, can_delete: admin };
}

export const directoryAccessSource = (caller: Caller): AccessSource => (isAdmin(caller) ? 'admin' : 'public');
