import { GOAL_KINDS, PATH_BY_KIND, type GoalKind } from '#shared/domain/goals/entity.ts';
import { recordKindOf, type Route } from '#shared/routes/types.ts';
import { HistoryListResponse } from '#shared/schemas/history.ts';

/** A goal's progress history and its chart (contract 13), for each goal kind. */
const kindRoutes = (kind: GoalKind): Route[] => {
  const base = `/rest/v2/${PATH_BY_KIND[kind]}/{id}`;
  const tag = PATH_BY_KIND[kind];
  const name = kind.replace('_', ' ');
  return [
    {
      method: 'GET',
      path: `${base}/history`,
      record: kind,
      handler: 'functions/history/list.ts',
      auth: 'jwt',
      table: 'read',
      doc: {
        summary: `Progress history of the ${name}: every change of its value, progress or status with its cause, oldest first (readable by whoever can read the goal)`,
        tag,
        extension: true,
        list: true,
        success: { status: 200, schema: HistoryListResponse },
      },
    },
    {
      method: 'GET',
      path: `${base}/progress.svg`,
      record: kind,
      handler: 'functions/history/chart.ts',
      auth: 'jwt',
      table: 'read',
      doc: {
        summary: `Line chart (SVG, 600x300 viewBox) of the ${name}'s progress over its dates, with the expected-pace line dashed and today marked`,
        tag,
        extension: true,
        success: { status: 200, contentType: 'image/svg+xml', description: 'An SVG image' },
      },
    },
  ];
};

export const historyRoutes: Route[] = GOAL_KINDS.flatMap(kindRoutes);

/** The goal kind of the row a history request came through (its `record`). */
export const historyGoalKindOf = (routeKey: string): GoalKind => recordKindOf<GoalKind>(historyRoutes, routeKey);
