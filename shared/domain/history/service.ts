import type { DataCtx } from '#shared/db/data-ctx.ts';
import { querySidePage } from '#shared/db/side-items.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { readableGoal } from '#shared/domain/goals/reads.ts';
import type { GoalKind, GoalRecord } from '#shared/domain/goals/entity.ts';
import { HISTORY_SK_PREFIX, historyKey, type HistoryRecord } from '#shared/domain/history/entity.ts';
import { BadRequestError } from '#shared/errors.ts';
import type { ListResult } from '#shared/list/engine.ts';
import { listPage } from '#shared/list/list-page.ts';
import { cursorBinding, openCursor, sealCursor } from '#shared/list/cursor.ts';
import { parsePageParams } from '#shared/list/params.ts';

/** The chart reads at most this many points (the latest ones); a goal checked in hourly for a year fits. */
export const CHART_MAX_POINTS = 10_000;

/** Walks a goal's history items oldest first (or newest first), one Query per DynamoDB page; `after`: from past that item's sort key. */
async function* historyItems(
  ctx: DataCtx,
  goalUuid: string,
  opts: { forward?: boolean; pageSize?: number; after?: string } = {},
): AsyncGenerator<{ rec: HistoryRecord; sk: string }> {
  const { PK } = historyKey(ctx.tenantId, goalUuid, 0);
  let startKey: Record<string, unknown> | undefined = opts.after === undefined ? undefined : { PK, SK: opts.after };
  do {
    const page = await querySidePage(ctx, PK, { prefix: HISTORY_SK_PREFIX, forward: opts.forward, limit: opts.pageSize, startKey });
    for (const item of page.items) yield { rec: item.rec as HistoryRecord, sk: item.SK };
    startKey = page.lastKey;
  } while (startKey);
}

/**
 * GET /rest/v2/{kind}/{uuid}/history: readable by whoever can read the goal (404 outside the tenant or of
 * another kind, 403 not visible). Paginated like every list (page, per_page, offset, count), oldest first;
 * no filters.
 */
export async function listHistory(
  ctx: DomainCtx,
  kind: GoalKind,
  goalUuid: string,
  query: Array<[string, string]>,
): Promise<{ goal: GoalRecord; result: ListResult<HistoryRecord> }> {
  const { page, rest } = parsePageParams(query);
  if (rest.length)
    throw new BadRequestError(
      `History takes no filter or sort: ${rest[0]![0]}=${rest[0]![1]}`,
      rest.map(([k]) => ({ field: k.replace(/\[\]$/, ''), code: 'unknown_attribute', message: 'history is not filterable or sortable' })),
    );
  // a cursor names the tenant and the goal (history has no filter or sort): one of another goal is 400
  const binding = cursorBinding([ctx.tenantId, 'history', goalUuid]);
  const after = page.cursor === undefined ? undefined : (await openCursor(binding, page.cursor)).k;
  const { goal } = await readableGoal(ctx, goalUuid, kind);
  const skip = page.offset + (page.page - 1) * page.perPage;
  const records: HistoryRecord[] = [];
  let seen = 0;
  let lastSk: string | undefined;
  // without count, a page reads no further than what it shows plus one item
  for await (const { rec, sk } of historyItems(ctx, goal.uuid, { pageSize: Math.min(1000, skip + page.perPage + 1), after })) {
    if (seen >= skip && records.length < page.perPage) {
      records.push(rec);
      lastSk = sk;
    }
    seen++;
    if (!page.count && seen > skip + page.perPage) break;
  }
  const hasNext = seen > skip + page.perPage;
  const nextCursor = hasNext && lastSk ? await sealCursor(binding, { k: lastSk }) : null;
  return { goal, result: listPage(page, { records, hasNext, fromCursor: after !== undefined, count: seen, nextCursor }, {}) };
}

/** The goal and its latest CHART_MAX_POINTS history points, oldest first (for the chart). */
export async function chartData(ctx: DomainCtx, kind: GoalKind, goalUuid: string): Promise<{ goal: GoalRecord; points: HistoryRecord[] }> {
  const { goal } = await readableGoal(ctx, goalUuid, kind);
  const points: HistoryRecord[] = [];
  for await (const { rec } of historyItems(ctx, goal.uuid, { forward: false })) {
    points.push(rec);
    if (points.length >= CHART_MAX_POINTS) break;
  }
  return { goal, points: points.reverse() };
}
