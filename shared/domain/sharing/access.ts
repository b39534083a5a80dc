import { canWriteContent, isAdmin, type Caller } from '#shared/auth/caller.ts';
import type { AccessSource, Checks } from '#shared/auth/permissions.ts';
import type { ListEntry } from '#shared/db/model.ts';
import type { ShareableRecord } from '#shared/domain/sharing/entity.ts';
import { satisfies, type Level } from '#shared/domain/sharing/types.ts';

/**
 * Who may do what with a shareable resource:
 * - the owner and admins (contract section 5: everything in the tenant) hold every level;
 * - anyone else holds the level of their grant, if any;
 * - viewers (role) write only access requests, so their checks never allow commenting, editing or managing
 *   grants, whatever their grant says.
 */
export interface ShareableAccess {
  /** Highest level held (owner and admins: `manage`); null: no access. */
  level: Level | null;
  /** Why the caller can see the resource; null when it cannot. A grant holder is `visible_entity`. */
  source: AccessSource | null;
}

export function shareableAccess(caller: Caller, s: ShareableRecord): ShareableAccess {
  if (s.owner_uuid === caller.userId) return { level: 'manage', source: 'owner' };
  if (isAdmin(caller)) return { level: 'manage', source: 'admin' };
  const grant = s.grants.find((g) => g.user_uuid === caller.userId);
  return grant ? { level: grant.level, source: 'visible_entity' } : { level: null, source: null };
}

/**
 * The same rule on a list index entry, whose envelope (`vis: limited`, `acl` = owner and grantees, see
 * shareableEntity) is projected on GSI1: a list skips what the caller cannot see without reading it.
 */
export function shareableEntryVisibility(caller: Caller): (e: ListEntry) => boolean {
  if (isAdmin(caller)) return () => true;
  const me = `u:${caller.userId}`;
  return (e) => e.vis !== 'limited' || (e.acl ?? []).includes(me);
}

/** Whether the caller may change grants: the owner, admins, and `manage` grantees who are not viewers. */
export const canManageGrants = (caller: Caller, access: ShareableAccess) => canWriteContent(caller) && satisfies(access.level, 'manage');

export function shareableChecks(caller: Caller, access: ShareableAccess): Checks {
  const writer = canWriteContent(caller);
  return {
    can_comment: writer && satisfies(access.level, 'comment'),
    can_edit: writer && satisfies(access.level, 'edit'),
    can_manage_grants: canManageGrants(caller, access),
    // There is something left to ask for.
    can_request_access: !satisfies(access.level, 'manage'),
  };
}

/** Who is told about an access request: the owner and every `manage` grantee (not admins at large). */
export const requestRecipients = (s: ShareableRecord, requesterUuid: string): string[] =>
  [...new Set([s.owner_uuid, ...s.grants.filter((g) => g.level === 'manage').map((g) => g.user_uuid)])].filter((u) => u !== requesterUuid);
