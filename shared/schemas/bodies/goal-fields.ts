import * as z from 'zod';
import { GOAL_TYPES, METRIC_TYPES, VISIBILITIES } from '#shared/domain/goals/entity.ts';
import { GOAL_LIMITS } from '#shared/domain/goals/rules.ts';
import { LABEL_NAME_MAX } from '#shared/domain/labels/entity.ts';
import { isoDate, nonBlank, uuid } from '#shared/schemas/bodies/fields.ts';

/**
 * What the goal bodies share (spec: "one record shape and one set of write parameters"), for the per-route
 * body modules beside it (goal-create.ts, goal-update.ts, goal-delete.ts; shared/schemas/goals.ts re-exports
 * them). Bodies are strict: an unknown field, `uuid`, `creator_uuid` or `tenant_uuid` is a 400 naming it.
 * Rules that need stored data (dates inside the period, short_id, references, metric, cycles) are checked by
 * the service and answer 422.
 */

const uuids = (max: number, what: string) =>
  z
    .array(uuid)
    .max(max, `at most ${max} ${what}`)
    .meta({ description: `At most ${max} (so one goal write fits one atomic transaction).` });

export const metricFields = {
  name: z.string().trim().max(200).nullable(),
  start_value: z.number(),
  target_value: z.number(),
  unit: z.string().trim().max(50).nullable(),
  metric_type: z.enum(METRIC_TYPES),
};

const visibleEntity = z.strictObject({
  entity_type: z.enum(['user', 'team']),
  entity_uuid: uuid,
  mode: z.enum(['view', 'edit']).optional().meta({ description: 'Default view.' }),
});

export const goalFields = {
  title: nonBlank(500),
  description: z.string().max(20_000).nullable(),
  time_period_uuid: uuid,
  start_date: isoDate,
  end_date: isoDate,
  goal_type: z.enum(GOAL_TYPES),
  visibility: z.enum(VISIBILITIES),
  team_uuids: uuids(GOAL_LIMITS.teams, 'teams').nullable(),
  owner_uuids: uuids(GOAL_LIMITS.owners, 'owners').nullable(),
  labels: z
    .array(nonBlank(LABEL_NAME_MAX))
    .max(GOAL_LIMITS.labels, `at most ${GOAL_LIMITS.labels} labels`)
    .nullable()
    .meta({
      description: `Label names, at most ${GOAL_LIMITS.labels}; unknown names become new regular labels, atomically with the goal.`,
    }),
  delegate_uuids: uuids(GOAL_LIMITS.delegates, 'delegates').nullable(),
  delegate_uuid: uuid
    .nullable()
    .meta({ description: 'Earlier variant of delegate_uuids: one delegate (null for none). Send one of the two.' }),
  checkin_due_days: z
    .number()
    .int()
    .min(0)
    .max(366)
    .nullable()
    .meta({ description: 'Days between expected check-ins (earlier variant); null for the default.' }),
  parents: z
    .array(z.union([uuid, z.strictObject({ parent_uuid: uuid, contribution_percent: z.number().min(0).max(100).optional() })]))
    .max(GOAL_LIMITS.parents, `at most ${GOAL_LIMITS.parents} parents`)
    .nullable()
    .meta({
      description: `At most ${GOAL_LIMITS.parents}. Parent goal uuids (any kind) → parent_links with contribution_percent 100. Extension: an element may be {parent_uuid, contribution_percent} to weight this goal in the parent's rollup (a kept link keeps its weight unless one is given). Not the goal itself nor one of its descendants; a goal the caller cannot see is refused as unknown (422 not_found).`,
    }),
  visible_entities: z
    .array(visibleEntity)
    .max(GOAL_LIMITS.visibleEntities)
    .nullable()
    .meta({
      description: `Users and teams that may see a limited goal (mode edit also lets them change it); at most ${GOAL_LIMITS.visibleEntities}. A team deleted after it was named stays listed and grants nothing; on update, entities already on the goal are not checked again.`,
    }),
};
