import { KIND_BY_PATH, type GoalKind } from '#shared/domain/goals/entity.ts';

/**
 * The goal kind a request is for, from its route key (`GET /rest/v2/key_results/{id}` → `key_result`):
 * the three kinds share one handler file per operation, and the route table lists each kind's path.
 */
export function kindOfRoute(routeKey: string): GoalKind {
  const segment = routeKey.split(' ')[1]?.split('/')[3] ?? '';
  const kind = KIND_BY_PATH[segment];
  if (!kind) throw new Error(`Route ${routeKey} is not a goal route`);
  return kind;
}
