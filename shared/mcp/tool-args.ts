import * as z from 'zod';
import { GOAL_KINDS } from '#shared/domain/goals/entity.ts';

/** The arguments several tools share (zod schemas with their descriptions for the model), and the REST list query pairs they become. */

export const uuid = z.string().meta({ description: 'A uuid as returned by the other tools.' });
export const page = z.number().int().min(1).optional().meta({ description: 'Page number, from 1 (default 1).' });
export const perPage = z.number().int().min(1).max(100).optional().meta({ description: 'Records per page, 1-100 (default 20).' });
export const idempotencyKey = z.string().optional().meta({
  description:
    'Any unique string (e.g. a UUID) to make a retry safe: the same key sent again within 24 hours returns the first answer and writes nothing more.',
});
export const kind = z
  .enum(GOAL_KINDS)
  .meta({ description: 'objective, key_result (a measurable result of an objective) or initiative (work that drives a key result).' });

export const cursor = z.string().optional().meta({
  description:
    'pagy.next_cursor of the previous answer: the next page, with no record skipped or repeated while others are added or removed meanwhile. Send the same other arguments as before, and no page.',
});
/** Query pairs of the list DSL (`q[<attribute>_<predicate>]`), `page` and `per_page`. */
export function pagePairs(a: { page?: number; per_page?: number; cursor?: string }): Array<[string, string]> {
  return [
    ...(a.page ? [['page', String(a.page)] as [string, string]] : []),
    ...(a.per_page ? [['per_page', String(a.per_page)] as [string, string]] : []),
    ...(a.cursor ? [['cursor', a.cursor] as [string, string]] : []),
  ];
}
export function filterPairs(filters: Record<string, unknown>): Array<[string, string]> {
  return Object.entries(filters).flatMap(
    ([k, v]): Array<[string, string]> => (Array.isArray(v) ? v.map((x) => [`q[${k}][]`, String(x)]) : [[`q[${k}]`, String(v)]]),
  );
}
