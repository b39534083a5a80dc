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
import { listTeams } from '#shared/domain/teams/list.ts';
import { teamCollectionChecks } from '#shared/domain/teams/service.ts';
import { listTimePeriods } from '#shared/domain/time-periods/list.ts';
import { timePeriodCollectionChecks } from '#shared/domain/time-periods/service.ts';
import { listUsers } from '#shared/domain/users/list.ts';
import { userCollectionChecks } from '#shared/domain/users/service.ts';
import { emitMetrics } from '#shared/observability/emit.ts';
import { checkinCollectionChecks, checkinRecordResponse, presentCheckins } from '#shared/presenters/checkins.ts';
import { presentTeam, presentTimePeriod, presentUser } from '#shared/presenters/directory.ts';
import { goalRecordResponse, presentGoals } from '#shared/presenters/goals.ts';
import { CheckinCreateBody } from '#shared/schemas/bodies/checkin-create.ts';
import { GoalCreateBody } from '#shared/schemas/bodies/goal-create.ts';
import { GoalUpdateBody } from '#shared/schemas/bodies/goal-update.ts';
import { CheckinListResponse, CheckinRecordSchema, CheckinResponse } from '#shared/schemas/checkins.ts';
import { accessSource, checks, pagy } from '#shared/schemas/common.ts';
import { GoalRecordSchema } from '#shared/schemas/goals.ts';
import { HistoryListResponse } from '#shared/schemas/history.ts';
import { TeamListResponse } from '#shared/schemas/teams.ts';
import { TimePeriodListResponse } from '#shared/schemas/time-periods.ts';
import { UserListResponse } from '#shared/schemas/users.ts';
import { todayUtc } from '#shared/clock.ts';
import { checkFeedReader, parseFeedQuery, readFeed } from '#shared/domain/events/feed.ts';
import { encodeCursor } from '#shared/domain/events/position.ts';
import { EVENT_TYPES } from '#shared/domain/webhooks/entity.ts';
import { BadRequestError } from '#shared/errors.ts';
import { EventFeedResponse } from '#shared/schemas/event-feed.ts';

/** The scopes of contract section 17 a tool needs; a call whose token lacks its tool's is refused 403 insufficient_scope (shared/mcp/server.ts). */
export const GOALS_READ = 'goals:read';
export const GOALS_WRITE = 'goals:write';
export const DIRECTORY_READ = 'directory:read';
export const EVENTS_READ = 'events:read';
export type McpScope = typeof GOALS_READ | typeof GOALS_WRITE | typeof DIRECTORY_READ | typeof EVENTS_READ;

/**
 * One MCP tool: its arguments and result as zod schemas (the REST bodies and records, never a second copy; JSON
 * Schema is made from them once per container), and `run`, which calls the domain exactly as the tool's REST
 * route does. `idempotent`: the REST route (a POST) whose Idempotency-Key records an `idempotency_key` shares, and
 * the permission check a replay passes first.
 */
export interface McpTool<A extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  description: string;
  scope: McpScope;
  readOnly: boolean;
  args: A;
  result: R;
  run: (ctx: RequestCtx, args: z.infer<A>) => Promise<z.infer<R>>;
  /** A short sentence about the result, for a model that reads text only. */
  summary: (result: z.infer<R>) => string;
  idempotent?: { route: (args: z.infer<A>) => string; authorizeReplay: (ctx: RequestCtx, args: z.infer<A>) => Promise<unknown> };
}

const tool = <A extends z.ZodType, R extends z.ZodType>(t: McpTool<A, R>) => t as unknown as McpTool;

/** A REST answer's `data`, as the REST route would have sent it (the presenters build an HTTP answer). */
const dataOf = (res: { body?: string }) => (JSON.parse(res.body!) as { data: unknown }).data as never;

const uuid = z.string().meta({ description: 'A uuid as returned by the other tools.' });
const page = z.number().int().min(1).optional().meta({ description: 'Page number, from 1 (default 1).' });
const perPage = z.number().int().min(1).max(100).optional().meta({ description: 'Records per page, 1-100 (default 20).' });
const idempotencyKey = z.string().optional().meta({
  description:
    'Any unique string (e.g. a UUID) to make a retry safe: the same key sent again within 24 hours returns the first answer and writes nothing more.',
});
const kind = z
  .enum(GOAL_KINDS)
  .meta({ description: 'objective, key_result (a measurable result of an objective) or initiative (work that drives a key result).' });

/** Query pairs of the list DSL (`q[<attribute>_<predicate>]`), `page` and `per_page`. */
const cursor = z.string().optional().meta({
  description:
    'pagy.next_cursor of the previous answer: the next page, with no record skipped or repeated while others are added or removed meanwhile. Send the same other arguments as before, and no page.',
});
function pagePairs(a: { page?: number; per_page?: number; cursor?: string }): Array<[string, string]> {
  return [
    ...(a.page ? [['page', String(a.page)] as [string, string]] : []),
    ...(a.per_page ? [['per_page', String(a.per_page)] as [string, string]] : []),
    ...(a.cursor ? [['cursor', a.cursor] as [string, string]] : []),
  ];
}
function filterPairs(filters: Record<string, unknown>): Array<[string, string]> {
  return Object.entries(filters).flatMap(
    ([k, v]): Array<[string, string]> => (Array.isArray(v) ? v.map((x) => [`q[${k}][]`, String(x)]) : [[`q[${k}]`, String(v)]]),
  );
}

/** The caller's visible goals of one kind, every page (bounded: at most `max`). */
async function allGoals(ctx: RequestCtx, k: GoalKind, pairs: Array<[string, string]>, max = 1000): Promise<GoalRecord[]> {
  const out: GoalRecord[] = [];
  for (let p = 1; out.length < max; p++) {
    const result = await listGoals(ctx, k, [...pairs, ['page', String(p)], ['per_page', '100']]);
    out.push(...result.records);
    if (result.pagy.next === null) break;
  }
  return out;
}

const listData = <T extends z.ZodType>(envelope: z.ZodObject<{ data: T }>) => envelope.shape.data;
const goalRecordData = z.object({ type: z.enum(GOAL_KINDS), record: GoalRecordSchema, checks, access_source: accessSource });

const SEARCH_FILTERS_HELP =
  'Filters in the list filter language, as an object of "<attribute>_<predicate>": value, all of them ANDed. Predicates: eq, not_eq, in, not_in (a list), cont, start, end, lt, lteq, gt, gteq, null, not_null. Attributes include current_status (not_started, in_progress, on_track, behind, at_risk, closed, postponed), pace (ahead, on_pace, behind), current_progress, time_period_uuid, owner_uuids, team_uuids, labels_name, last_checkin_date, end_date. Example: {"current_status_eq": "at_risk", "end_date_lteq": "2026-12-31"}.';

export const TOOLS: McpTool[] = [
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
  tool({
    name: 'list_time_periods',
    title: 'List time periods',
    description:
      'The time periods (quarters, years) goals belong to, with their dates. Use it to find time_period_uuid for create_goal or goals_needing_attention.',
    scope: DIRECTORY_READ,
    readOnly: true,
    args: z.strictObject({ page, per_page: perPage }),
    result: listData(TimePeriodListResponse),
    run: async (ctx, a) => {
      const result = await listTimePeriods(ctx, pagePairs(a));
      return dataOf(listResponse('time_period', result, result.records.map(presentTimePeriod), timePeriodCollectionChecks(ctx)));
    },
    summary: (r) =>
      `${r.records.length} time period(s): ${r.records.map((p) => `${p.name} (${p.start_date}..${p.end_date}, uuid ${p.uuid})`).join('; ')}`,
  }),
  tool({
    name: 'list_teams',
    title: 'List teams',
    description: 'The teams of the organisation. Use it to find team uuids for goal owners, filters or visibility.',
    scope: DIRECTORY_READ,
    readOnly: true,
    args: z.strictObject({ page, per_page: perPage }),
    result: listData(TeamListResponse),
    run: async (ctx, a) => {
      const result = await listTeams(ctx, pagePairs(a));
      return dataOf(listResponse('team', result, result.records.map(presentTeam), teamCollectionChecks(ctx)));
    },
    summary: (r) => `${r.records.length} team(s): ${r.records.map((t) => `${t.name} (uuid ${t.uuid})`).join('; ')}`,
  }),
  tool({
    name: 'list_users',
    title: 'List people',
    description:
      "People in the organisation, optionally those whose name (or e-mail, when the query has an @) contains `query`. Use it to find a person's uuid, e.g. to filter goals by owner.",
    scope: DIRECTORY_READ,
    readOnly: true,
    args: z.strictObject({
      query: z.string().optional().meta({ description: 'Part of a name or e-mail address.' }),
      page,
      per_page: perPage,
    }),
    result: listData(UserListResponse),
    run: async (ctx, a) => {
      const q: Array<[string, string]> = a.query ? [[a.query.includes('@') ? 'q[email_cont]' : 'q[display_name_cont]', a.query]] : [];
      const result = await listUsers(ctx, [...q, ...pagePairs(a)]);
      return dataOf(listResponse('user', result, result.records.map(presentUser), userCollectionChecks(ctx)));
    },
    summary: (r) => `${r.records.length} person(s): ${r.records.map((u) => `${u.display_name ?? u.email} (uuid ${u.uuid})`).join('; ')}`,
  }),
  tool({
    name: 'goals_needing_attention',
    title: 'Goals needing attention',
    description:
      'The goals the user can see that are behind pace (progress at least 10 points under where it should be by today) or have had no check-in for 14 days, worst first, each with the reasons. Closed and postponed goals are left out. Use it for "what is behind, and why?".',
    scope: GOALS_READ,
    readOnly: true,
    args: z.strictObject({
      time_period_uuid: uuid.optional().meta({ description: 'Only goals of this time period (see list_time_periods).' }),
    }),
    result: z.object({
      goals: z.array(
        z.object({
          record: GoalRecordSchema,
          reasons: z.array(z.object({ code: z.enum(['behind_pace', 'no_recent_checkin']), message: z.string() })),
          progress_gap: z.number().meta({ description: 'expected_progress - current_progress, in points (0 unless behind pace).' }),
          days_without_checkin: z.number().nullable(),
        }),
      ),
    }),
    run: async (ctx, a) => {
      const pairs: Array<[string, string]> = [
        ['q[current_status_not_in][]', 'closed'],
        ['q[current_status_not_in][]', 'postponed'],
      ];
      if (a.time_period_uuid) pairs.push(['q[time_period_uuid_eq]', a.time_period_uuid]);
      const goals = (await Promise.all(GOAL_KINDS.map((k) => allGoals(ctx, k, pairs)))).flat();
      const today = todayUtc();
      const day = (d: string) => Date.parse(`${d.slice(0, 10)}T00:00:00Z`) / 86_400_000;
      const presented = await presentGoals(ctx, goals, today);
      const out = presented.flatMap((g) => {
        const reasons: Array<{ code: 'behind_pace' | 'no_recent_checkin'; message: string }> = [];
        const gap = g.pace === 'behind' ? Math.round((g.expected_progress - (g.current_progress ?? 0)) * 100) / 100 : 0;
        if (g.pace === 'behind')
          reasons.push({
            code: 'behind_pace',
            message: `Progress is ${g.current_progress}%, but ${g.expected_progress}% was expected by today`,
          });
        const since = g.last_checkin_date ?? g.created_at;
        const days = Math.floor(day(today) - day(since));
        if (days >= 14)
          reasons.push({
            code: 'no_recent_checkin',
            message: g.last_checkin_date
              ? `No check-in for ${days} days (last on ${g.last_checkin_date})`
              : `Never checked in, created ${days} days ago`,
          });
        return reasons.length
          ? [
              {
                record: g,
                reasons,
                progress_gap: gap,
                days_without_checkin: g.last_checkin_date ? days : null,
                stale: days >= 14 ? days : 0,
              },
            ]
          : [];
      });
      // worst first: the furthest behind pace, then the longest without a check-in
      out.sort((x, y) => y.progress_gap - x.progress_gap || y.stale - x.stale || x.record.title.localeCompare(y.record.title));
      return { goals: out.map(({ stale: _, ...g }) => g) };
    },
    summary: (r) =>
      r.goals.length
        ? `${r.goals.length} goal(s) need attention: ${r.goals.map((g) => `${g.record.title}: ${g.reasons.map((x) => x.message).join('; ')}`).join(' | ')}`
        : 'No goal needs attention',
  }),
  tool({
    name: 'list_events',
    title: 'What changed',
    description:
      'The organisation\'s change events (goals, check-ins, users, teams, ... created, updated or deleted), oldest first, the same ones webhooks receive. Use it to answer "what changed since ...?": pass after = the id of the last event already seen, or cursor = pagy.next_cursor of the previous answer, and optionally types (e.g. ["checkin.created"]). Administrators only.',
    scope: EVENTS_READ,
    readOnly: true,
    args: z.strictObject({
      after: z.string().optional().meta({ description: 'An event id: the events recorded after it (the last one already read).' }),
      cursor,
      types: z
        .array(z.enum(EVENT_TYPES))
        .min(1)
        .optional()
        .meta({ description: 'Only these event types, e.g. ["checkin.created", "goal.updated"].' }),
      per_page: perPage,
    }),
    result: listData(EventFeedResponse),
    run: async (ctx, a) => {
      checkFeedReader(ctx.caller);
      const q = parseFeedQuery([
        ...(a.after ? [['after', a.after] as [string, string]] : []),
        ...(a.types ? [['types', a.types.join(',')] as [string, string]] : []),
        ...pagePairs(a),
      ]);
      const { events, next } = await readFeed(ctx, q);
      return {
        type: 'event' as const,
        // the feed's events are the webhook bodies (FeedEventSchema); the result schema's zod type widens them
        records: events as unknown as Array<Record<string, unknown>>,
        pagy: { per_page: q.perPage, next_cursor: next ? encodeCursor(ctx.tenantId, next) : null },
        checks: {},
        filters: q.types ? { types: [...q.types] } : {},
      };
    },
    summary: (r) =>
      `${r.records.length} event(s)${r.records.length ? `: ${r.records.map((e) => `${e.type} ${e.id}`).join(', ')}` : ''}${r.pagy.next_cursor ? ' (more: pass cursor)' : ''}`,
  }),
];

export const toolByName = new Map(TOOLS.map((t) => [t.name, t]));
