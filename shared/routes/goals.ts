import { GOAL_KINDS, PATH_BY_KIND, type GoalKind } from '#shared/domain/goals/entity.ts';
import { recordKindOf, type Route } from '#shared/routes/types.ts';
import { GoalCreateBody, GoalDeleteBody, GoalNoBody, GoalRecordSchema, GoalUpdateBody, goalListResponse, goalResponse } from '#shared/schemas/goals.ts';

/**
 * The three goal kinds share one handler file per operation; each kind has its own rows (so API Gateway, the
 * local stack and the OpenAPI document list its paths), and each row names its kind (`record`), which the
 * handler reads with goalKindOf.
 */
const kindRoutes = (kind: GoalKind): Route[] => {
  const base = `/rest/v2/${PATH_BY_KIND[kind]}`;
  const tag = PATH_BY_KIND[kind];
  const name = kind.replace('_', ' ');
  const a = kind === 'objective' || kind === 'initiative' ? `an ${name}` : `a ${name}`;
  return [
    { method: 'GET', path: base, record: kind, handler: 'functions/goals/list.ts', auth: 'jwt', table: 'read', doc: { summary: `List ${name}s the caller can see (deleted ones only when a filter names discarded_at)`, tag, list: true, success: { status: 200, schema: goalListResponse(kind) } } },
    { method: 'POST', path: base, record: kind, handler: 'functions/goals/create.ts', auth: 'jwt', table: 'write', doc: { summary: `Create ${a} (admins and members)`, tag, body: GoalCreateBody, success: { status: 201, schema: goalResponse(kind) } } },
    { method: 'GET', path: `${base}/{id}`, record: kind, handler: 'functions/goals/get.ts', auth: 'jwt', table: 'read', doc: { summary: `Get ${a} (a deleted one too, with discarded_at set)`, tag, success: { status: 200, schema: goalResponse(kind) } } },
    { method: 'PUT', path: `${base}/{id}`, record: kind, handler: 'functions/goals/update.ts', auth: 'jwt', table: 'write', doc: { summary: `Update ${a}`, tag, body: GoalUpdateBody, success: { status: 200, schema: goalResponse(kind) } } },
    { method: 'DELETE', path: `${base}/{id}`, record: kind, handler: 'functions/goals/delete.ts', auth: 'jwt', table: 'write', doc: { summary: `Delete (discard) ${a}, optionally with its children or whole hierarchy; returns the flat record`, tag, body: GoalDeleteBody, success: { status: 200, schema: GoalRecordSchema } } },
    { method: 'POST', path: `${base}/{id}/archive`, record: kind, handler: 'functions/goals/archive.ts', auth: 'jwt', table: 'write', doc: { summary: `Archive ${a} (sets archived_at, archived_by_uuid)`, tag, extension: true, body: GoalNoBody, success: { status: 200, schema: goalResponse(kind) } } },
    { method: 'POST', path: `${base}/{id}/unarchive`, record: kind, handler: 'functions/goals/unarchive.ts', auth: 'jwt', table: 'write', doc: { summary: `Unarchive ${a} (clears archived_at, archived_by_uuid)`, tag, extension: true, body: GoalNoBody, success: { status: 200, schema: goalResponse(kind) } } },
  ];
};

export const goalRoutes: Route[] = GOAL_KINDS.flatMap(kindRoutes);

/** The goal kind of the row a request came through (its `record`). */
export const goalKindOf = (routeKey: string): GoalKind => recordKindOf<GoalKind>(goalRoutes, routeKey);
