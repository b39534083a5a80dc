import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { dataSourceAccessSource, dataSourceChecks, updateDataSource } from '#shared/domain/integrations/data-sources.ts';
import { presentDataSource } from '#shared/presenters/integrations.ts';

export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/data-source-update.ts').then((m) => m.DataSourceUpdateBody),
  handle: async ({ ctx, params, body }) => {
    const { dataSource, access } = await updateDataSource(ctx, params.id!, body);
    return recordResponse(200, 'data_source', presentDataSource(dataSource), dataSourceChecks(access), dataSourceAccessSource(access));
  },
});
