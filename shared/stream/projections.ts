import type { Projection } from '#shared/stream/projection.ts';
import { accessRequestNoticesProjection } from '#shared/stream/access-request-notices.ts';
import { currentValuesProjection } from '#shared/stream/current-values.ts';
import { historyProjection } from '#shared/stream/projections/history.ts';
import { rollupProjection } from '#shared/stream/rollups.ts';
import { outboundEventsProjection } from '#shared/stream/projections/events.ts';
import { goalReadModelsProjection } from '#shared/stream/read-models/projection.ts';
import { labelNamesProjection } from '#shared/stream/projections/label-names.ts';

/**
 * Every projection the change stream feeds, in the order each change is offered to them (one line each; a
 * concern that needs another's result reads the table, never this order). Current values come before
 * rollups so a check-in's goal is settled before its ancestors are recomputed from it.
 */
export const projections: readonly Projection[] = [
  currentValuesProjection,
  rollupProjection,
  accessRequestNoticesProjection,
  historyProjection,
  outboundEventsProjection,
  goalReadModelsProjection,
  labelNamesProjection,
];
