import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { dataSourceAccessSource, dataSourceChecks, getDataSource } from '#shared/domain/integrations/data-sources.ts';
import { presentDataSource } from '#shared/presenters/integrations.ts';

export const handler = apiHandler({
  handle: async ({ ctx, params }) => {
    const { dataSource, access } = await getDataSource(ctx, params.id!);
    return recordResponse(200, 'data_source', presentDataSource(dataSource), dataSourceChecks(access), dataSourceAccessSource(access));
  },
});
