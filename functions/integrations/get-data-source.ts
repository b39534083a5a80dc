import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { dataSourceAccessSource, dataSourceChecks, getDataSource, presentDataSource } from '#shared/domain/integrations/data-sources.ts';

export const handler = apiHandler({
  handle: async ({ ctx, params }) => {
    const { dataSource, access } = await getDataSource(ctx, params.id!);
    return recordResponse(200, 'data_source', presentDataSource(dataSource), dataSourceChecks(access), dataSourceAccessSource(access));
  },
});
