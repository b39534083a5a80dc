import * as z from 'zod';
import { collectSignals } from '#shared/signals.ts';
import type { RequestCtx } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { validateBody } from '#shared/http/middleware/body-validation.ts';
import { createCheckin, unknownGoal } from '#shared/domain/checkins/service.ts';
import { listCheckins } from '#shared/domain/checkins/list.ts';
import { authorizeGoalCreate, createGoal } from '#shared/domain/goals/create.ts';
import { GOAL_KINDS, PATH_BY_KIND, type GoalKind, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { listGoals } from '#shared/domain/goals/list.ts';
import { readableGoal, requireNamedGoalEditor } from '#shared/domain/goals/reads.ts';
import { updateGoal } from '#shared/domain/goals/update.ts';
import { listHistory } from '#shared/domain/history/service.ts';
import { emitMetrics } from '#shared/observability/emit.ts';
import { checkinCollectionChecks, checkinRecordResponse, presentCheckins } from '#shared/presenters/checkins.ts';
import { goalRecordResponse, presentGoals } from '#shared/presenters/goals.ts';
import { CheckinCreateBody } from '#shared/schemas/bodies/checkin-create.ts';
import { GoalCreateBody } from '#shared/schemas/bodies/goal-create.ts';
import { GoalUpdateBody } from '#shared/schemas/bodies/goal-update.ts';
import { CheckinListResponse, CheckinRecordSchema, CheckinResponse } from '#shared/schemas/checkins.ts';
import { accessSource, checks, pagy } from '#shared/schemas/common.ts';
import { GoalRecordSchema } from '#shared/schemas/goals.ts';
import { HistoryListResponse } from '#shared/schemas/history.ts';
import { BadRequestError } from '#shared/errors.ts';
import { dataOf, GOALS_READ, GOALS_WRITE, listData, tool, type McpTool } from '#shared/mcp/tool.ts';
import { cursor, filterPairs, idempotencyKey, kind, page, pagePairs, perPage, uuid } from '#shared/mcp/tool-args.ts';

/** The goal and check-in tools: search, read, create and update goals, check in, and a goal's check-ins and history. */

/** The caller's visible goals of one kind, every page (bounded: at most `max`). */
export async function allGoals(ctx: RequestCtx, k: GoalKind, pairs: Array<[string, string]>, max = 1000): Promise<GoalRecord[]> {
  const out: GoalRecord[] = [];
  for (let p = 1; out.length < max; p++) {
    const result = await listGoals(ctx, k, [...pairs, ['page', String(p)], ['per_page', '100']]);
    out.push(...result.records);
    if (result.pagy.next === null) break;
  }
  return out;
}

const goalRecordData = z.object({ type: z.enum(GOAL_KINDS), record: GoalRecordSchema, checks, access_source: accessSource });

const SEARCH_FILTERS_HELP =
  'Filters in the list filter language, as an object of "<attribute>_<predicate>": value, all of them ANDed. Predicates: eq, not_eq, in, not_in (a list), cont, start, end, lt, lteq, gt, gteq, null, not_null. Attributes include current_status (not_started, in_progress, on_track, behind, at_risk, closed, postponed), pace (ahead, on_pace, behind), current_progress, time_period_uuid, owner_uuids, team_uuids, labels_name, last_checkin_date, end_date. Example: {"current_status_eq": "at_risk", "end_date_lteq": "2026-12-31"}.';

export const GOAL_TOOLS: McpTool[] = [
  tool({
    name: 'search_goals',
    title: 'Search goals',
    description:
      'Find objectives, key results and initiatives the user can see, by kind, words in the title, or any filter. Use it to answer questions like "which key results are at risk?" or to find a goal\'s uuid before reading or changing it. Without kind, each kind is searched and paged on its own.',
    scope: GOALS_READ,
    readOnly: true,
    args: z.strictObject({
      kind: kind.optional(),
      title_contains: z.string().optional().meta({ description: 'Words the title contains (case-insensitive).' }),
      filters: z
        .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.union([z.string(), z.number()]))]))
        .optional()
        .meta({ description: SEARCH_FILTERS_HELP }),
      sort: z.string().optional().meta({ description: 'An attribute and a direction, e.g. "end_date asc" or "current_progress desc".' }),
      page,
      per_page: perPage,
      cursor,
    }),
    result: z.object({
      records: z.array(GoalRecordSchema),
      pages: z.array(z.object({ kind: z.enum(GOAL_KINDS), pagy })),
    }),
    run: async (ctx, a) => {
      const pairs: Array<[string, string]> = [
        ...(a.title_contains ? [['q[title_cont]', a.title_contains] as [string, string]] : []),
        ...filterPairs(a.filters ?? {}),
        ...(a.sort ? [['q[s]', a.sort] as [string, string]] : []),
        ...pagePairs(a),
      ];
      // a cursor is one list's position: it pages the kind it came from
      if (a.cursor && !a.kind)
        throw new BadRequestError('cursor pages one kind: send kind with it', [
          { field: 'kind', code: 'required', message: 'the kind whose pages[].pagy.next_cursor this is' },
        ]);
      const kinds = a.kind ? [a.kind] : [...GOAL_KINDS];
      const results = await Promise.all(kinds.map((k) => listGoals(ctx, k, pairs)));
      const records = (await Promise.all(results.map((r) => presentGoals(ctx, r.records)))).flat();
      return { records, pages: results.map((r, i) => ({ kind: kinds[i]!, pagy: r.pagy })) };
    },
    summary: (r) =>
      `${r.records.length} goal(s): ${r.records.map((g) => `${g.title} (${g.type}, ${g.current_status}, uuid ${g.uuid})`).join('; ') || 'none'}`,
  }),
  tool({
    name: 'get_goal',
    title: 'Read a goal',
    description:
      'Read one goal (objective, key result or initiative) by uuid with its parents, its children and its last five check-ins. Use it to explain where a goal stands and why.',
    scope: GOALS_READ,
    readOnly: true,
    args: z.strictObject({ uuid }),
    result: goalRecordData.extend({
      parents: z.array(GoalRecordSchema),
      children: z.array(GoalRecordSchema),
      recent_checkins: z.array(CheckinRecordSchema),
    }),
    run: async (ctx, a) => {
      const view = await readableGoal(ctx, a.uuid);
      const id = view.goal.uuid;
      // parents the caller cannot see are left out, as the goal list leaves them out
      const parents = (
        await Promise.all(
          view.goal.parent_links.map((p) =>
            readableGoal(ctx, p.parent_uuid).then(
              (v) => v.goal,
              () => undefined,
            ),
          ),
        )
      ).filter((g): g is GoalRecord => g !== undefined);
      const children = (await Promise.all(GOAL_KINDS.map((k) => allGoals(ctx, k, [['q[links_as_child_uuid_eq]', id]], 100)))).flat();
      const checkins = await listCheckins(ctx, [
        ['q[goal_uuid_eq]', id],
        ['q[s]', 'checkin_date desc'],
        ['per_page', '5'],
      ]);
      return {
        ...(dataOf(await goalRecordResponse(ctx, 200, view)) as z.infer<typeof goalRecordData>),
        parents: await presentGoals(ctx, parents),
        children: await presentGoals(ctx, children),
        recent_checkins: await presentCheckins(ctx, checkins.records),
      };
    },
    summary: (r) =>
      `${r.record.title} (${r.record.type}): ${r.record.current_status}, progress ${r.record.current_progress ?? 'none'}% (expected ${r.record.expected_progress}%), ${r.parents.length} parent(s), ${r.children.length} child(ren), ${r.recent_checkins.length} recent check-in(s)`,
  }),
  tool({
    name: 'create_goal',
    title: 'Create a goal',
    description:
      'Create an objective, key result or initiative in a time period (admins and members). Give a metric with target_value for a measurable key result, and parents to link it under an objective. Use list_time_periods for time_period_uuid.',
    scope: GOALS_WRITE,
    readOnly: false,
    args: GoalCreateBody.extend({ kind, idempotency_key: idempotencyKey }),
    result: goalRecordData,
    run: async (ctx, { kind: k, idempotency_key: _, ...fields }) => {
      const body = validateBody(GoalCreateBody, fields);
      return dataOf(await goalRecordResponse(ctx, 201, await createGoal(ctx, k, body)));
    },
    summary: (r) => `Created ${r.type} "${r.record.title}" (uuid ${r.record.uuid})`,
    idempotent: {
      route: (a) => `POST /rest/v2/${PATH_BY_KIND[a.kind]}`,
      authorizeReplay: (ctx, { kind: _k, idempotency_key: _i, ...fields }) =>
        authorizeGoalCreate(ctx, validateBody(GoalCreateBody, fields)),
    },
  }),
  tool({
    name: 'update_goal',
    title: 'Update a goal',
    description:
      "Change a goal's title, description, dates, owners, teams, labels, metric, parents or other fields by uuid (the caller must be able to edit it). Only the fields given change. To record progress, use create_checkin instead.",
    scope: GOALS_WRITE,
    readOnly: false,
    args: GoalUpdateBody.extend({ uuid }),
    result: goalRecordData,
    run: async (ctx, { uuid: id, ...fields }) => {
      const body = validateBody(GoalUpdateBody, fields);
      const { goal } = await readableGoal(ctx, id);
      return dataOf(await goalRecordResponse(ctx, 200, await updateGoal(ctx, goal.type, goal.uuid, body)));
    },
    summary: (r) => `Updated ${r.type} "${r.record.title}" (uuid ${r.record.uuid})`,
  }),
  tool({
    name: 'create_checkin',
    title: 'Check in on a goal',
    description:
      'Record progress on a goal: its new value (for a key result with a metric), its status, a note. The goal and every parent that rolls up from it are updated. The caller must be able to edit the goal. Send an idempotency_key so that a retry does not record the check-in twice.',
    scope: GOALS_WRITE,
    readOnly: false,
    args: CheckinCreateBody.extend({ idempotency_key: idempotencyKey }),
    result: listData(CheckinResponse),
    run: async (ctx, { idempotency_key: _, ...fields }) => {
      const body = validateBody(CheckinCreateBody, fields);
      const { value: view, signals } = await collectSignals(() => createCheckin(ctx, { ...body, source: 'mcp' }));
      await emitMetrics({ CheckinsWritten: 1, RollupDepth: signals.rollupDepth });
      return dataOf(await checkinRecordResponse(ctx, 201, view));
    },
    summary: (r) =>
      `Checked in on goal ${r.record.goal_uuid}: value ${r.record.value ?? 'none'}, status ${r.record.status} (check-in uuid ${r.record.uuid})`,
    idempotent: {
      route: () => 'POST /rest/v2/checkins',
      authorizeReplay: (ctx, a) => requireNamedGoalEditor(ctx, a.goal_uuid, () => unknownGoal(a.goal_uuid)),
    },
  }),
  tool({
    name: 'list_checkins',
    title: "List a goal's check-ins",
    description: 'The check-ins of one goal, newest first: values, statuses and notes over time. Use it to see how a goal has moved.',
    scope: GOALS_READ,
    readOnly: true,
    args: z.strictObject({ goal_uuid: uuid, page, per_page: perPage, cursor }),
    result: listData(CheckinListResponse),
    run: async (ctx, a) => {
      const { goal } = await readableGoal(ctx, a.goal_uuid);
      const result = await listCheckins(ctx, [['q[goal_uuid_eq]', goal.uuid], ['q[s]', 'checkin_date desc'], ...pagePairs(a)]);
      return dataOf(listResponse('checkin', result, await presentCheckins(ctx, result.records), checkinCollectionChecks(ctx)));
    },
    summary: (r) => `${r.records.length} check-in(s)`,
  }),
  tool({
    name: 'goal_history',
    title: "A goal's progress history",
    description:
      "Every change of a goal's value, progress or status with its cause (a check-in, a child's rollup, an edit), oldest first. Use it to explain why a goal moved.",
    scope: GOALS_READ,
    readOnly: true,
    args: z.strictObject({ uuid, page, per_page: perPage }),
    result: listData(HistoryListResponse),
    run: async (ctx, a) => {
      const { goal } = await readableGoal(ctx, a.uuid);
      const { result } = await listHistory(ctx, goal.type, goal.uuid, pagePairs(a));
      return dataOf(listResponse('history', result, result.records, {}));
    },
    summary: (r) => `${r.records.length} change(s)`,
  }),
];
