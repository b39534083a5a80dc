import { GOAL_KINDS, PATH_BY_KIND, type GoalKind } from '#shared/domain/goals/entity.ts';
import { goalRowsOf } from '#shared/routes/goal-kinds.ts';
import type { Route } from '#shared/routes/types.ts';
import {
  GoalCreateBody,
  GoalDeleteBody,
  GoalNoBody,
  GoalRecordSchema,
  GoalUpdateBody,
  goalListResponse,
  goalResponse,
} from '#shared/schemas/goals.ts';

/**
 * The three goal kinds share one handler file per operation; each kind has its own rows (so API Gateway, the
 * local stack and the OpenAPI document list its paths), and each row names its kind (`record`), which the
 * handler reads with goalKindOf (shared/routes/goal-kinds.ts, which holds the rows' wiring; the docs are added here).
 */
const kindRoutes = (kind: GoalKind): Route[] => {
  const row = goalRowsOf(kind);
  const tag = PATH_BY_KIND[kind];
  const name = kind.replace('_', ' ');
  const a = kind === 'objective' || kind === 'initiative' ? `an ${name}` : `a ${name}`;
  return [
    {
      ...row.list,
      doc: {
        summary: `List ${name}s the caller can see (deleted ones only when a filter names discarded_at)`,
        tag,
        list: true,
        success: { status: 200, schema: goalListResponse(kind) },
      },
    },
    {
      ...row.create,
      doc: { summary: `Create ${a} (admins and members)`, tag, body: GoalCreateBody, success: { status: 201, schema: goalResponse(kind) } },
    },
    {
      ...row.get,
      doc: { summary: `Get ${a} (a deleted one too, with discarded_at set)`, tag, success: { status: 200, schema: goalResponse(kind) } },
    },
    { ...row.update, doc: { summary: `Update ${a}`, tag, body: GoalUpdateBody, success: { status: 200, schema: goalResponse(kind) } } },
    {
      ...row.delete,
      doc: {
        summary: `Delete (discard) ${a}, optionally with its children or whole hierarchy; returns the flat record`,
        tag,
        body: GoalDeleteBody,
        success: { status: 200, schema: GoalRecordSchema },
      },
    },
    {
      ...row.archive,
      doc: {
        summary: `Archive ${a} (sets archived_at, archived_by_uuid)`,
        tag,
        extension: true,
        body: GoalNoBody,
        success: { status: 200, schema: goalResponse(kind) },
      },
    },
    {
      ...row.unarchive,
      doc: {
        summary: `Unarchive ${a} (clears archived_at, archived_by_uuid)`,
        tag,
        extension: true,
        body: GoalNoBody,
        success: { status: 200, schema: goalResponse(kind) },
      },
    },
  ];
};

export const goalRoutes: Route[] = GOAL_KINDS.flatMap(kindRoutes);
