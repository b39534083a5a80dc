import { GOAL_KINDS, PATH_BY_KIND, type GoalKind } from '#shared/domain/goals/entity.ts';
import { historyRowsOf } from '#shared/routes/goal-kinds.ts';
import type { Route } from '#shared/routes/types.ts';
import { HistoryListResponse } from '#shared/schemas/history.ts';

/** A goal's progress history and its chart (contract 13), for each goal kind: the wiring in shared/routes/goal-kinds.ts, the docs here. */
const kindRoutes = (kind: GoalKind): Route[] => {
  const row = historyRowsOf(kind);
  const tag = PATH_BY_KIND[kind];
  const name = kind.replace('_', ' ');
  return [
    {
      ...row.list,
      doc: {
        summary: `Progress history of the ${name}: every change of its value, progress or status with its cause, oldest first (readable by whoever can read the goal)`,
        tag,
        extension: true,
        list: true,
        success: { status: 200, schema: HistoryListResponse },
      },
    },
    {
      ...row.chart,
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
