/**
 * Goal commands, the pure part: given what the command read, the input, the time and fresh ids, decide the
 * records to write or the typed error (a Decision). No I/O, no clock, no id generation
 * (test/unit/goals-decide.test.ts). The shells (create.ts, update.ts, delete.ts, archive.ts) run them through
 * the command runner (shared/command/run.ts). Create and update are in decide-create.ts and decide-update.ts,
 * what they share in decide-refs.ts; archive and delete here.
 */
import type { Stored } from '#shared/db/model.ts';
import { accept, refuse, type Decision } from '#shared/decision.ts';
import type { GoalDeleteCommand } from '#shared/domain/goals/commands.ts';
import { goalEditRefusal } from '#shared/domain/goals/refusals.ts';
import { editRefusal, goalNotFound, type Actor, type SeenGoal } from '#shared/domain/goals/decide-refs.ts';
import { type GoalKind, type GoalRecord, GOAL_KINDS } from '#shared/domain/goals/entity.ts';
import { IMMEDIATE_FLAGS, tooMany } from '#shared/domain/goals/rules.ts';
import { ForbiddenError } from '#shared/errors.ts';

export type { Decision } from '#shared/decision.ts';
export * from '#shared/domain/goals/decide-refs.ts';
export * from '#shared/domain/goals/decide-create.ts';
export * from '#shared/domain/goals/decide-update.ts';

// ---------- archive ----------

/** Archive (or unarchive): set or clear archived_at/archived_by_uuid; undefined when there is nothing to change. */
export function decideArchive(
  kind: GoalKind,
  seen: SeenGoal,
  archived: boolean,
  actor: Actor,
  now: string,
): Decision<GoalRecord | undefined> {
  const g = seen.stored.record;
  const error = editRefusal(kind, g, seen.access);
  if (error) return refuse(error);
  if (!!g.archived_at === archived) return accept(undefined);
  return accept({ ...g, archived_at: archived ? now : null, archived_by_uuid: archived ? actor.userUuid : null, updated_at: now });
}

// ---------- delete (soft) ----------

/** The kinds whose direct children a delete also discards (the including_immediate_* flags sent). */
export const immediateKinds = (input: GoalDeleteCommand): GoalKind[] => GOAL_KINDS.filter((k) => input[IMMEDIATE_FLAGS[k]]);

/**
 * Contract 6: the goal and the `others` (its flagged children or whole hierarchy, `truncated` when the walk
 * stopped at a transaction's size) are discarded; goals already deleted are left as they are. The target
 * must be of the route's kind (404) and changeable by the caller (403); so must each other goal (403 naming
 * the first it may not; a goal it cannot see is never named). A hierarchy too large for one transaction is
 * 422 too_many and nothing is deleted.
 */
export function decideDelete(
  kind: GoalKind,
  _input: GoalDeleteCommand,
  target: SeenGoal,
  others: { goals: ReadonlyArray<SeenGoal>; truncated: boolean },
  actor: Actor,
  now: string,
): Decision<Array<{ before: Stored<GoalRecord>; after: GoalRecord }>> {
  const t = target.stored.record;
  const refusal = t.type !== kind ? goalNotFound(kind, t.uuid) : goalEditRefusal(target.access);
  if (refusal) return { error: refusal };
  if (others.truncated) return { error: tooMany('delete_hierarchy') };
  const discarded: Array<{ before: Stored<GoalRecord>; after: GoalRecord }> = [];
  for (const s of [target, ...others.goals]) {
    const g = s.stored.record;
    if (g.discarded_at) continue;
    if (s !== target && !s.access.canEdit) {
      // a goal the caller cannot see is not named (contract 5): its uuid would reveal it
      return {
        error: new ForbiddenError(
          s.access.canView
            ? `You cannot delete ${g.type.replace('_', ' ')} ${g.uuid} of this hierarchy`
            : 'You cannot delete every goal of this hierarchy',
        ),
      };
    }
    discarded.push({ before: s.stored, after: { ...g, discarded_at: now, discarded_by_uuid: actor.userUuid, updated_at: now } });
  }
  return { write: discarded };
}

/** The field a too_many refusal of a delete names: what the client should send less of. */
export const deleteBlame = (kind: GoalKind, input: GoalDeleteCommand) =>
  input.delete_hierarchy ? 'delete_hierarchy' : IMMEDIATE_FLAGS[immediateKinds(input)[0] ?? kind];
