import * as z from 'zod';
import { listResponse } from '#shared/http/respond.ts';
import { listTeams } from '#shared/domain/teams/list.ts';
import { teamCollectionChecks } from '#shared/domain/teams/service.ts';
import { listTimePeriods } from '#shared/domain/time-periods/list.ts';
import { timePeriodCollectionChecks } from '#shared/domain/time-periods/service.ts';
import { listUsers } from '#shared/domain/users/list.ts';
import { userCollectionChecks } from '#shared/domain/users/service.ts';
import { presentTeam, presentTimePeriod, presentUser } from '#shared/presenters/directory.ts';
import { TeamListResponse } from '#shared/schemas/teams.ts';
import { TimePeriodListResponse } from '#shared/schemas/time-periods.ts';
import { UserListResponse } from '#shared/schemas/users.ts';
import type { Checks } from '#shared/auth/permissions.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import type { ListResult } from '#shared/list/engine.ts';
import { dataOf, DIRECTORY_READ, listData, tool, type McpTool } from '#shared/mcp/tool.ts';
import { page, pagePairs, perPage } from '#shared/mcp/tool-args.ts';

/** The directory tools: time periods, teams and people, mostly to find the uuids other tools take. */

/**
 * A directory list with nothing to filter by: its page, presented as its REST list answers, and one line a
 * record for the assistant (list_time_periods, list_teams).
 */
function plainList<T extends z.ZodType, Rec>(t: {
  name: string;
  title: string;
  description: string;
  type: string;
  list: (ctx: DomainCtx, pairs: Array<[string, string]>) => Promise<ListResult<Rec>>;
  present: (r: Rec) => unknown;
  checks: (ctx: DomainCtx) => Checks;
  result: z.ZodObject<{ data: T }>;
  summary: (data: z.infer<T>) => string;
}): McpTool {
  return tool({
    name: t.name,
    title: t.title,
    description: t.description,
    scope: DIRECTORY_READ,
    readOnly: true,
    args: z.strictObject({ page, per_page: perPage }),
    result: listData(t.result),
    run: async (ctx, a) => {
      const result = await t.list(ctx, pagePairs(a));
      return dataOf(listResponse(t.type, result, result.records.map(t.present), t.checks(ctx)));
    },
    summary: t.summary,
  });
}

export const DIRECTORY_TOOLS: McpTool[] = [
  plainList({
    name: 'list_time_periods',
    title: 'List time periods',
    description:
      'The time periods (quarters, years) goals belong to, with their dates. Use it to find time_period_uuid for create_goal or goals_needing_attention.',
    type: 'time_period',
    list: listTimePeriods,
    present: presentTimePeriod,
    checks: timePeriodCollectionChecks,
    result: TimePeriodListResponse,
    summary: (r) =>
      `${r.records.length} time period(s): ${r.records.map((p) => `${p.name} (${p.start_date}..${p.end_date}, uuid ${p.uuid})`).join('; ')}`,
  }),
  plainList({
    name: 'list_teams',
    title: 'List teams',
    description: 'The teams of the organisation. Use it to find team uuids for goal owners, filters or visibility.',
    type: 'team',
    list: listTeams,
    present: presentTeam,
    checks: teamCollectionChecks,
    result: TeamListResponse,
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
];
