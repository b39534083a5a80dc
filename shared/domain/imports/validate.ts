import { getEntities } from '#shared/db/reads.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { uniq } from '#shared/domain/fields.ts';
import { goalAccess } from '#shared/domain/goals/access.ts';
import { goalEntity, type GoalKind } from '#shared/domain/goals/entity.ts';
import type { GoalCreateCommand } from '#shared/domain/goals/commands.ts';
import { GOAL_LIMITS } from '#shared/domain/goals/rules.ts';

import type { ImportError } from '#shared/domain/imports/entity.ts';
import { teamEntity } from '#shared/domain/teams/entity.ts';
import { timePeriodEntity } from '#shared/domain/time-periods/entity.ts';
import { userEntity } from '#shared/domain/users/entity.ts';

/** One import row (contract 13), in the domain's terms: a goal create's fields plus `ref`, `kind` and the parents by ref. The import body schema parses rows into these. */
export interface ImportRow
  extends Pick<
    GoalCreateCommand,
    'title' | 'time_period_uuid' | 'description' | 'goal_type' | 'owner_uuids' | 'team_uuids' | 'labels' | 'metric'
  > {
  ref: string;
  kind: GoalKind;
  /** refs of earlier rows of the same import */
  parent_refs?: string[];
  /** existing goal uuids */
  parents?: string[];
}

/** A row checked against the wire shape: the row, or each field's problem (`parseImportRow`). */
export type ParsedRow = { row: ImportRow } | { problems: Array<{ field: string; message: string }> };
export type RowParser = (raw: unknown) => ParsedRow;

/** A valid row, ready to create: its goal body (parents resolved at creation) and where its parents are. */
export interface PlannedRow {
  index: number;
  ref: string;
  kind: GoalKind;
  input: GoalCreateCommand;
  /** Existing goals. */
  parents: string[];
  /** Indexes of earlier rows of this import. */
  parentRows: number[];
}

/**
 * Checks every row before anything is created (contract 13: one invalid row fails the import, with every
 * row's errors listed). The rules are the goal create's: body shape and caps, references to time periods,
 * users and teams of the tenant, metric rules, and parents the importer can see and may update (contract
 * 5), plus the import's own: refs unique, `parent_refs` naming earlier rows (so parents are created
 * first), at most GOAL_LIMITS.parents parents in all. References are read in batches (the loader), once each.
 */
export async function validateRows(
  ctx: DomainCtx,
  raw: unknown[],
  parseRow: RowParser,
): Promise<{ errors: ImportError[]; plan: PlannedRow[] }> {
  const errors: ImportError[] = [];
  const fail = (index: number, field: string, message: string) => errors.push({ row: index + 1, field, message });
  const rows: Array<ImportRow | undefined> = raw.map((r, i) => {
    const parsed = parseRow(r);
    if ('row' in parsed) return parsed.row;
    for (const p of parsed.problems) fail(i, p.field, p.message);
    return undefined;
  });

  const refRow = new Map<string, number>();
  rows.forEach((r, i) => {
    if (!r) return;
    if (refRow.has(r.ref)) fail(i, 'ref', `ref ${r.ref} is already the ref of row ${refRow.get(r.ref)! + 1}`);
    else refRow.set(r.ref, i);
  });

  const valid = rows.flatMap((r, i) => (r ? [{ r, i }] : []));
  const [periods, users, teams, parents] = await Promise.all([
    ctx.loader.many(timePeriodEntity, uniq(valid.map(({ r }) => r.time_period_uuid.toLowerCase()))),
    ctx.loader.many(userEntity, uniq(valid.flatMap(({ r }) => (r.owner_uuids ?? []).map((u) => u.toLowerCase())))),
    ctx.loader.many(teamEntity, uniq(valid.flatMap(({ r }) => (r.team_uuids ?? []).map((t) => t.toLowerCase())))),
    getEntities(ctx, goalEntity, uniq(valid.flatMap(({ r }) => (r.parents ?? []).map((p) => p.toLowerCase())))),
  ]);
  const known = {
    periods: new Set(periods.map((p) => p.uuid)),
    users: new Set(users.map((u) => u.uuid)),
    teams: new Set(teams.map((t) => t.uuid)),
  };
  const parentProblem = new Map<string, string | null>();
  for (const [id, { record }] of parents) {
    const access = await goalAccess(ctx, record);
    parentProblem.set(
      id,
      !access.canView
        ? null
        : record.discarded_at
          ? `${id} is a deleted goal`
          : !access.canEdit
            ? `you cannot place goals under ${id}`
            : '',
    );
  }

  const plan: PlannedRow[] = [];
  for (const { r, i } of valid) {
    const before = errors.length;
    if (!known.periods.has(r.time_period_uuid.toLowerCase()))
      fail(i, 'time_period_uuid', `${r.time_period_uuid} is not a time period of this tenant`);
    for (const u of uniq(r.owner_uuids ?? []))
      if (!known.users.has(u.toLowerCase())) fail(i, 'owner_uuids', `${u} is not a user of this tenant`);
    for (const t of uniq(r.team_uuids ?? []))
      if (!known.teams.has(t.toLowerCase())) fail(i, 'team_uuids', `${t} is not a team of this tenant`);
    for (const p of uniq(r.parents ?? [])) {
      const problem = parentProblem.get(p.toLowerCase());
      if (problem === undefined || problem === null)
        fail(i, 'parents', `${p} is not a goal of this tenant`); // one answer for unknown and invisible (contract 5)
      else if (problem) fail(i, 'parents', problem);
    }
    const parentRows: number[] = [];
    for (const ref of uniq(r.parent_refs ?? [])) {
      const at = refRow.get(ref);
      if (at === undefined || at >= i)
        fail(i, 'parent_refs', at === i ? 'a goal cannot be its own parent' : `${ref} is not the ref of an earlier row`);
      else parentRows.push(at);
    }
    if (uniq(r.parents ?? []).length + parentRows.length > GOAL_LIMITS.parents)
      fail(i, 'parent_refs', `at most ${GOAL_LIMITS.parents} parents in all (parents and parent_refs)`);
    const m = r.metric;
    if (m && (m.metric_type ?? 'reach') === 'reach' && (m.start_value ?? 0) === m.target_value)
      fail(i, 'metric.target_value', 'A reach metric needs target_value different from start_value');
    if (m && m.metric_type === 'stay_between' && (m.start_value ?? 0) > m.target_value)
      fail(i, 'metric.target_value', 'A stay_between metric needs start_value (lower bound) on or before target_value (upper bound)');
    if (errors.length > before) continue;
    const { ref, kind, parent_refs: _refs, parents: existing, ...body } = r;
    plan.push({ index: i, ref, kind, input: body, parents: uniq((existing ?? []).map((p) => p.toLowerCase())), parentRows });
  }
  errors.sort((a, b) => a.row - b.row);
  return { errors, plan };
}
