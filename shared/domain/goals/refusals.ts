import type { AccessSource } from '#shared/auth/permissions.ts';
import { ForbiddenError, type AppError } from '#shared/errors.ts';

// The pure half of goal permissions: what a caller may do with a goal, and the refusal that means. The reads
// that establish it (the caller's teams, the goal's teams) are goals/access.ts; decisions import only this.

/**
 * Goal permissions (contract section 5).
 * - admin: everything.
 * - view: a public goal is visible to everyone in the tenant; a limited goal to its creator, owners,
 *   delegates, members of its teams, and the users/teams named in visible_entities.
 * - edit (update, delete, check in, archive): members (not viewers) who are owner, delegate or creator, an
 *   owner of a team on the goal, or named in visible_entities with mode `edit` (directly or via a team).
 */
export interface GoalAccess {
  canView: boolean;
  canEdit: boolean;
  /** Why the caller can see the goal; null when it cannot. */
  source: AccessSource | null;
}

/** Why the caller may not see a goal (403, or `hidden` for a goal named in a body, which reads as unknown), or undefined. */
export function goalViewRefusal(access: GoalAccess, hidden?: () => AppError): AppError | undefined {
  if (!access.canView) return hidden ? hidden() : new ForbiddenError('You cannot see this goal');
  return undefined;
}

/** Why the caller may not change a goal (403, or `hidden` for a goal it cannot see), or undefined. */
export function goalEditRefusal(access: GoalAccess, hidden?: () => AppError): AppError | undefined {
  const hiddenRefusal = goalViewRefusal(access, hidden);
  if (hiddenRefusal) return hiddenRefusal;
  if (!access.canEdit) return new ForbiddenError('You cannot change this goal');
  return undefined;
}
