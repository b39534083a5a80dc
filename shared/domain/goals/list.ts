import { isAdmin } from '#shared/auth/caller.ts';
import { listEntryOf, type ListEntry } from '#shared/db/model.ts';
import { findUniques } from '#shared/db/reads.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalEntryVisibility } from '#shared/domain/goals/access.ts';
import {
  childrenOfKind,
  goalEntity,
  goalsByDelegate,
  goalsByLabel,
  goalsByOwner,
  goalsByTeam,
  goalsInPeriod,
  goalState,
  type GoalKind,
  type GoalRecord,
} from '#shared/domain/goals/entity.ts';
import { ancestorsOf } from '#shared/domain/goals/hierarchy.ts';
import { planGoalList } from '#shared/domain/goals/list-plan.ts';
import { subtreeOfKind, type SubtreeSight } from '#shared/domain/goals/subtree.ts';
import { labelEntity, normalizeLabelName, type LabelRecord } from '#shared/domain/labels/entity.ts';
import { teamEntity, type TeamRecord } from '#shared/domain/teams/entity.ts';
import { timePeriodEntity, type TimePeriodRecord } from '#shared/domain/time-periods/entity.ts';
import { userEntity, type UserRecord } from '#shared/domain/users/entity.ts';
import { runList } from '#shared/list/engine.ts';
import { type AttrDef, type IndexEnv, type ListResource, entryIndex } from '#shared/list/resource.ts';
import type { IndexSource } from '#shared/list/streams.ts';
import type { AttrType } from '#shared/list/filter.ts';
import type { Loader } from '#shared/list/entity-cache.ts';
import { listStart, type ListStart } from '#shared/list/start.ts';

/**
 * Goal lists (spec filter table + contract 4), one resource per kind over the kind's list `<kind>`.
 *
 * On a large list, status (alone or with a period, owner, label or team), count=true and the last-check-in
 * order are planned from the read models first (list-plan.ts); otherwise the generic plan below.
 *
 * Index-served (eq/in), so a filtered page reads only the entries of that index and the page's items:
 * uuid and short_id (item reads by id), time_period_uuid, owners_uuid, teams_uuid, labels_uuid,
 * labels_name (name → label via its uniqueness claim), delegates_uuid, links_as_child_ancestor_uuid and
 * links_as_child_uuid (the kind's `parent` entries), ancestors_uuid (walk of `goal@child_of`). Every other
 * attribute is checked on the items (engine residual). Associations match when any associated record does.
 *
 * The caller's visibility and the discarded state are checked on the index entries (envelope), so
 * invisible and deleted goals cost no item read. Deleted goals are listed only when a filter names
 * discarded_at (contract 4); archived goals are listed (filter archived_at_null to leave them out).
 *
 * Associations are what exists and what the caller may see (contract 4 and 5), so filters reveal nothing
 * the records do not:
 *  - labels_*: only labels that still exist (a deleted label's index entries stay on its goals; the label
 *    delete does not fan out over them). The getters read labels through the per-request loader, and the
 *    labels_uuid index serves only the partitions of named labels that exist (one batch read).
 *  - ancestors_*, links_as_child_*: only goals the caller can see (judged on their envelope, as lists
 *    judge goals), and the walk up or down does not pass through a goal it cannot see. A filter naming an
 *    invisible goal (ancestors_uuid, links_as_child_uuid, links_as_child_ancestor_uuid) matches nothing.
 *
 * A list starts before its caller is known (functions/goals/list.ts: `early`): the plan, the first keys and the
 * first level of a subtree walk are read with the caller's own read; what the caller may see (`sight`) is
 * judged once it resolves, which is the engine's gate.
 */

type Attr = AttrDef<GoalRecord>;
const attr = (type: AttrType, get: Attr['get'], index?: Attr['index']): Attr => (index ? { type, get, index } : { type, get });

/** Index entry of a goal read by id: what the engine would have found in the kind's list. */
const entryOf = (g: GoalRecord): ListEntry => listEntryOf(goalEntity, g);

/** Goals by id, of this kind only (the ids of another kind's goals match nothing on this kind's path). */
async function byIds(kind: GoalKind, ids: string[], env: IndexEnv): Promise<IndexSource> {
  const goals = await env.loader.many(goalEntity, ids);
  return { entries: goals.filter((g) => g.type === kind).map(entryOf) };
}

/** Ids holding the uniqueness claims `name` of the values (one batch read): short_id → goal, label name → label. */
const claimHolders = async (env: IndexEnv, name: string, values: string[]) => new Set((await findUniques(env.ctx, name, values)).values());

const many =
  <T>(load: (g: GoalRecord, l: Loader) => Promise<T[]>) =>
  (pick: (t: T) => unknown): Attr['get'] =>
  async (g, l) =>
    (await load(g, l)).map(pick);

const owners = many<UserRecord>((g, l) => l.many(userEntity, g.owner_uuids));
const delegates = many<UserRecord>((g, l) => l.many(userEntity, g.delegate_uuids));
const teams = many<TeamRecord>((g, l) => l.many(teamEntity, g.team_uuids));
// the loader leaves out labels deleted since they were attached
const labels = many<LabelRecord>((g, l) => l.many(labelEntity, g.label_uuids));
const period =
  (pick: (p: TimePeriodRecord) => unknown): Attr['get'] =>
  async (g, l) => {
    const p = await l.one(timePeriodEntity, g.time_period_uuid);
    return p ? pick(p) : null;
  };

const userAttrs = (prefix: string, of: typeof owners, uuidIndex: Attr['index']): Record<string, Attr> => ({
  [`${prefix}_uuid`]: attr(
    'string',
    of((u) => u.uuid),
    uuidIndex,
  ),
  [`${prefix}_display_name`]: attr(
    'string',
    of((u) => u.display_name),
  ),
  [`${prefix}_status`]: attr(
    'string',
    of((u) => u.status),
  ),
  [`${prefix}_manager_uuid`]: attr(
    'string',
    of((u) => u.manager_uuid),
  ),
  [`${prefix}_license_type`]: attr(
    'string',
    of((u) => u.license_type),
  ),
});

/** What the caller can see of other goals (ancestors, parents): judged on the goal's envelope, as lists judge goals. */
export interface GoalSight {
  /** True for admins: every goal is visible, nothing needs reading to know it. */
  all: boolean;
  entry(e: ListEntry): boolean;
  goal(g: GoalRecord): boolean;
}

async function goalSight(ctx: DomainCtx): Promise<GoalSight> {
  const entry = await goalEntryVisibility(ctx);
  return { all: isAdmin(ctx.caller), entry, goal: (g) => entry(entryOf(g)) };
}

/** Of the named goals, those that exist and the caller can see (one batch read, once the caller is known; none for admins). */
async function visibleGoalIds(ids: string[], env: IndexEnv, sight: Promise<GoalSight>): Promise<string[]> {
  const s = await sight;
  if (s.all) return ids;
  return (await env.loader.many(goalEntity, ids)).filter(s.goal).map((g) => g.uuid);
}

/**
 * The kind's list resource as a caller sees it: `sight` resolves once the caller is known, `seen` is its value
 * afterwards (the engine calls what is synchronous only after its gate).
 */
function goalListResource(kind: GoalKind, sight: Promise<GoalSight>, seen: () => GoalSight): ListResource<GoalRecord> {
  const ancestors = many<GoalRecord>(async (g, l) => {
    const s = await sight;
    return ancestorsOf(g, l, s.all ? undefined : s.goal);
  });
  // the goal's links as a child to parents the caller can see (a link has no identity beyond its parent)
  const links = async (g: GoalRecord, l: Loader) => {
    const s = await sight;
    if (s.all || !g.parent_links.length) return g.parent_links;
    const visible = new Set(
      (
        await l.many(
          goalEntity,
          g.parent_links.map((p) => p.parent_uuid),
        )
      )
        .filter(s.goal)
        .map((p) => p.uuid),
    );
    return g.parent_links.filter((p) => visible.has(p.parent_uuid));
  };
  const parentIndex = async (values: unknown[], env: IndexEnv): Promise<IndexSource> => ({
    partitions: (await visibleGoalIds(values as string[], env, sight)).map((v) => env.entryPartition(childrenOfKind(kind), v)),
  });
  // the subtree walk reads its first level while the caller is read; the roots are read alongside, to judge them once it is
  const subtreeIndex = async (values: unknown[], env: IndexEnv): Promise<IndexSource> => {
    const roots = values as string[];
    const read = env.loader.many(goalEntity, roots);
    read.catch(() => undefined);
    const judge = sight.then(
      async (s): Promise<SubtreeSight> => (s.all ? { roots } : { roots: (await read).filter(s.goal).map((g) => g.uuid), through: s.entry }),
    );
    return { entries: await subtreeOfKind(env.ctx, roots, kind, judge) };
  };
  const listed = (g: GoalRecord) => goalState(g) !== 'discarded' && seen().goal(g);
  return {
    type: kind,
    entity: goalEntity,
    lists: [kind],
    // most selective first: a single goal, a parent's children, a person's or label's goals, a subtree, a team's, a period's
    plan: (query) => planGoalList({ kind, seesAll: sight.then((s) => s.all), listed }, query),
    driverOrder: [
      'uuid',
      'short_id',
      'links_as_child_ancestor_uuid',
      'links_as_child_uuid',
      'delegates_uuid',
      'owners_uuid',
      'labels_uuid',
      'labels_name',
      'ancestors_uuid',
      'teams_uuid',
      'time_period_uuid',
    ],
    attributes: {
      uuid: attr(
        'string',
        (g) => g.uuid,
        (values, env) => byIds(kind, values as string[], env),
      ),
      type: attr('string', (g) => g.type),
      title: attr('string', (g) => g.title),
      description: attr('string', (g) => g.description),
      short_id: attr(
        'string',
        (g) => g.short_id,
        async (values, env) =>
          byIds(
            kind,
            [
              ...(await claimHolders(
                env,
                'short_id',
                (values as string[]).map((v) => v.toUpperCase()),
              )),
            ],
            env,
          ),
      ),
      searchable_content: attr('string', (g) => g.searchable_content),
      path: attr('string', (g) => g.path),
      goal_type: attr('string', (g) => g.goal_type),
      visibility: attr('string', (g) => g.visibility),
      progress_mode: attr('string', (g) => g.progress_mode),
      current_status: attr('string', (g) => g.current_status),
      status: attr('string', (g) => g.current_status), // earlier-variant name of current_status
      last_checkin_date: attr('date', (g) => g.last_checkin_date),
      start_date: attr('date', (g) => g.start_date),
      end_date: attr('date', (g) => g.end_date),
      created_at: attr('timestamp', (g) => g.created_at),
      updated_at: attr('timestamp', (g) => g.updated_at),
      discarded_at: attr('timestamp', (g) => g.discarded_at),
      archived_at: attr('timestamp', (g) => g.archived_at),
      creator_uuid: attr('string', (g) => g.creator_uuid),
      current_progress: attr('number', (g) => g.current_progress),
      current_value: attr('number', (g) => g.current_value),
      score: attr('number', (g) => g.score),
      checkin_due_days: attr('number', (g) => g.checkin_due_days),
      current_metric_uuid: attr('string', (g) => g.current_metric_uuid),
      metric_type: attr('string', (g) => g.metric?.metric_type ?? null),
      time_period_uuid: attr('string', (g) => g.time_period_uuid, entryIndex(goalsInPeriod(kind))),
      time_period_name: attr(
        'string',
        period((p) => p.name),
      ),
      time_period_start_date: attr(
        'date',
        period((p) => p.start_date),
      ),
      time_period_end_date: attr(
        'date',
        period((p) => p.end_date),
      ),
      ...userAttrs('owners', owners, entryIndex(goalsByOwner(kind))),
      ...userAttrs('delegates', delegates, entryIndex(goalsByDelegate(kind))),
      labels_uuid: attr(
        'string',
        labels((l) => l.uuid),
        async (values, env) => ({
          // a deleted label's entries outlive it: serve only the partitions of labels that exist
          partitions: (await env.loader.many(labelEntity, values as string[])).map((l) => env.entryPartition(goalsByLabel(kind), l.uuid)),
        }),
      ),
      labels_name: attr(
        'string',
        labels((l) => l.name),
        async (values, env) => ({
          partitions: [...(await claimHolders(env, 'label_name', (values as string[]).map(normalizeLabelName)))].map((id) =>
            env.entryPartition(goalsByLabel(kind), id),
          ),
        }),
      ),
      labels_parent_uuid: attr(
        'string',
        labels((l) => l.parent_uuid),
      ),
      labels_is_group: attr(
        'boolean',
        labels((l) => l.is_group),
      ),
      teams_uuid: attr('string', (g) => g.team_uuids, entryIndex(goalsByTeam(kind))),
      teams_name: attr(
        'string',
        teams((t) => t.name),
      ),
      teams_display_name: attr(
        'string',
        teams((t) => t.display_name),
      ),
      teams_parent_uuid: attr(
        'string',
        teams((t) => t.parent_uuid),
      ),
      teams_status: attr(
        'string',
        teams((t) => t.status),
      ),
      teams_is_org: attr(
        'boolean',
        teams((t) => t.is_org),
      ),
      teams_depth: attr(
        'number',
        teams((t) => t.depth),
      ),
      // the goal's links as a child: each names a parent (the link has no identity of its own beyond it)
      links_as_child_uuid: attr('string', async (g, l) => (await links(g, l)).map((p) => p.parent_uuid), parentIndex),
      links_as_child_ancestor_uuid: attr('string', async (g, l) => (await links(g, l)).map((p) => p.parent_uuid), parentIndex),
      links_as_child_contribution_percent: attr('number', async (g, l) => (await links(g, l)).map((p) => p.contribution_percent)),
      ancestors_uuid: attr(
        'string',
        ancestors((a) => a.uuid),
        subtreeIndex,
      ),
      ancestors_type: attr(
        'string',
        ancestors((a) => a.type),
      ),
      ancestors_current_status: attr(
        'string',
        ancestors((a) => a.current_status),
      ),
      ancestors_status: attr(
        'string',
        ancestors((a) => a.current_status),
      ),
      ancestors_last_checkin_date: attr(
        'date',
        ancestors((a) => a.last_checkin_date),
      ),
      ancestors_time_period_uuid: attr(
        'string',
        ancestors((a) => a.time_period_uuid),
      ),
      ancestors_discarded_at: attr(
        'timestamp',
        ancestors((a) => a.discarded_at),
      ),
      ancestors_creator_uuid: attr(
        'string',
        ancestors((a) => a.creator_uuid),
      ),
      ancestors_archived_at: attr(
        'timestamp',
        ancestors((a) => a.archived_at),
      ),
    },
  };
}

/** The kind's list as the caller sees it (the hierarchy filters depend on what it can see); it may start before the caller is known. */
export async function listGoals(start: ListStart<DomainCtx> | DomainCtx, kind: GoalKind, pairs: Array<[string, string]>) {
  const { data, loader, ctx } = listStart(start);
  let seen: GoalSight | undefined;
  const gate = ctx.then(goalSight).then((s) => (seen = s));
  gate.catch(() => undefined); // a refused caller (401, 429): the engine stops at the gate, when it gets there
  // what the resource derives from the sight never rejects: after a refusal it waits forever and is dropped with the list
  const sight = gate.catch(() => new Promise<never>(() => undefined));
  return runList(
    goalListResource(kind, sight, () => seen!),
    {
      ctx: data,
      loader,
      pairs,
      gate,
      entryFilter: (e, filters) => seen!.entry(e) && (e.state !== 'discarded' || filters.some((f) => f.attribute === 'discarded_at')),
    },
  );
}
