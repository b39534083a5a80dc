import type { Projection } from '#shared/stream/projection.ts';
import { accessRequestNoticesProjection } from '#shared/stream/projections/access-request-notices.ts';
import { currentValuesProjection } from '#shared/stream/projections/current-values.ts';
import { historyProjection } from '#shared/stream/projections/history.ts';
import { rollupProjection } from '#shared/stream/projections/rollups.ts';
import { outboundEventsProjection } from '#shared/stream/projections/events.ts';
import { goalPathsProjection } from '#shared/stream/projections/goal-paths.ts';
import { goalReadModelsProjection } from '#shared/stream/projections/goal-read-models.ts';
import { labelNamesProjection } from '#shared/stream/projections/label-names.ts';
import { webhookCreatorsProjection } from '#shared/stream/projections/webhook-creators.ts';

/**
 * Every projection the change stream feeds (one line each). A change is offered to all of them at once; a
 * concern that needs another's result for the same change names it in `after` (rollups wait for current
 * values, so a check-in's goal is settled before its ancestors are recomputed from it), and must come after
 * it here; anything else one needs of another it reads from the table.
 */
export const projections: readonly Projection[] = [
  currentValuesProjection,
  rollupProjection,
  accessRequestNoticesProjection,
  historyProjection,
  outboundEventsProjection,
  goalReadModelsProjection,
  goalPathsProjection,
  labelNamesProjection,
  webhookCreatorsProjection,
];
