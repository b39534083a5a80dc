import { GOAL_KINDS, PATH_BY_KIND, type GoalKind } from '#shared/domain/goals/entity.ts';
import { recordKindOf, type Route } from '#shared/routes/types.ts';

/** A route row without its `doc`: what the stacks and the handlers read. */
type Wiring = Omit<Route, 'doc'>;

/**
 * The wiring of the rows the goal and history handlers share between the goal kinds: method, path, record kind,
 * handler, access. shared/routes/goals.ts and history.ts add each row's doc (its zod schemas) to make the route
 * table; the handlers learn their row's kind here, without loading those schemas at cold start.
 */
export const goalRowsOf = (kind: GoalKind) => {
  const base = `/rest/v2/${PATH_BY_KIND[kind]}`;
  return {
    list: {
      method: 'GET',
      path: base,
      record: kind,
      handler: 'functions/goals/list.ts',
      auth: 'jwt',
      door: 'rest',
      scope: 'goals:read',
      table: 'read',
    },
    create: {
      method: 'POST',
      path: base,
      record: kind,
      handler: 'functions/goals/create.ts',
      auth: 'jwt',
      door: 'rest',
      scope: 'goals:write',
      table: 'write',
    },
    get: {
      method: 'GET',
      path: `${base}/{id}`,
      record: kind,
      handler: 'functions/goals/get.ts',
      auth: 'jwt',
      door: 'rest',
      scope: 'goals:read',
      table: 'read',
    },
    update: {
      method: 'PUT',
      path: `${base}/{id}`,
      record: kind,
      handler: 'functions/goals/update.ts',
      auth: 'jwt',
      door: 'rest',
      scope: 'goals:write',
      table: 'write',
    },
    delete: {
      method: 'DELETE',
      path: `${base}/{id}`,
      record: kind,
      handler: 'functions/goals/delete.ts',
      auth: 'jwt',
      door: 'rest',
      scope: 'goals:write',
      table: 'write',
    },
    archive: {
      method: 'POST',
      path: `${base}/{id}/archive`,
      record: kind,
      handler: 'functions/goals/archive.ts',
      auth: 'jwt',
      door: 'rest',
      scope: 'goals:write',
      table: 'write',
    },
    unarchive: {
      method: 'POST',
      path: `${base}/{id}/unarchive`,
      record: kind,
      handler: 'functions/goals/unarchive.ts',
      auth: 'jwt',
      door: 'rest',
      scope: 'goals:write',
      table: 'write',
    },
  } as const satisfies Record<string, Wiring>;
};

/** A goal's progress history and its chart (contract 13), for each goal kind. */
export const historyRowsOf = (kind: GoalKind) => {
  const base = `/rest/v2/${PATH_BY_KIND[kind]}/{id}`;
  return {
    list: {
      method: 'GET',
      path: `${base}/history`,
      record: kind,
      handler: 'functions/history/list.ts',
      auth: 'jwt',
      door: 'rest',
      scope: 'goals:read',
      table: 'read',
    },
    chart: {
      method: 'GET',
      path: `${base}/progress.svg`,
      record: kind,
      handler: 'functions/history/chart.ts',
      auth: 'jwt',
      door: 'rest',
      scope: 'goals:read',
      table: 'read',
    },
  } as const satisfies Record<string, Wiring>;
};

const goalRows = GOAL_KINDS.flatMap((kind) => Object.values(goalRowsOf(kind)));
const historyRows = GOAL_KINDS.flatMap((kind) => Object.values(historyRowsOf(kind)));

/** The goal kind of the row a goal request came through (its `record`). */
export const goalKindOf = (routeKey: string): GoalKind => recordKindOf<GoalKind>(goalRows, routeKey);

/** The goal kind of the row a history request came through (its `record`). */
export const historyGoalKindOf = (routeKey: string): GoalKind => recordKindOf<GoalKind>(historyRows, routeKey);
