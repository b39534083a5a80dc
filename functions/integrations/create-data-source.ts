import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { createDataSource, dataSourceAccessSource, dataSourceChecks, unknownGoal } from '#shared/domain/integrations/data-sources.ts';
import { presentDataSource } from '#shared/presenters/integrations.ts';
import { requireNamedGoalEditor } from '#shared/domain/goals/reads.ts';

export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/data-source-create.ts').then((m) => m.DataSourceCreateBody),
  handle: async ({ ctx, body }) => {
    const { dataSource, access } = await createDataSource(ctx, body);
    return recordResponse(201, 'data_source', presentDataSource(dataSource), dataSourceChecks(access), dataSourceAccessSource(access));
  },
  authorizeReplay: ({ ctx, body }) => requireNamedGoalEditor(ctx, body.goal_uuid, () => unknownGoal(body.goal_uuid)),
});
