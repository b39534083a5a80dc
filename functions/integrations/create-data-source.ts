import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { createDataSource, dataSourceAccessSource, dataSourceChecks, unknownGoal } from '#shared/domain/integrations/data-sources.ts';
import { presentCreatedDataSource } from '#shared/presenters/integrations.ts';
import { requireNamedGoalEditor } from '#shared/domain/goals/reads.ts';

/** 201; a push source's secret is in this answer only (so its copy kept for Idempotency-Key replays is sealed). */
export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/data-source-create.ts').then((m) => m.DataSourceCreateBody),
  sealReplays: true,
  handle: async ({ ctx, body }) => {
    const { dataSource, access, pushSecret } = await createDataSource(ctx, body);
    return recordResponse(
      201,
      'data_source',
      presentCreatedDataSource(dataSource, pushSecret),
      dataSourceChecks(access),
      dataSourceAccessSource(access),
    );
  },
  authorizeReplay: ({ ctx, body }) => requireNamedGoalEditor(ctx, body.goal_uuid, () => unknownGoal(body.goal_uuid)),
});
