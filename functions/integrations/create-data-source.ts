import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { createDataSource, dataSourceAccessSource, dataSourceChecks } from '#shared/domain/integrations/data-sources.ts';
import { presentDataSource } from '#shared/presenters/integrations.ts';

export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/data-source-create.ts').then((m) => m.DataSourceCreateBody),
  handle: async ({ ctx, body }) => {
    const { dataSource, access } = await createDataSource(ctx, body);
    return recordResponse(201, 'data_source', presentDataSource(dataSource), dataSourceChecks(access), dataSourceAccessSource(access));
  },
});
