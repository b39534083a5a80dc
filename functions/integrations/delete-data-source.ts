import { apiHandler, json } from '#shared/http/api.ts';
import { deleteDataSource } from '#shared/domain/integrations/data-sources.ts';
import { presentDataSource } from '#shared/presenters/integrations.ts';

/** 200 with the flat deleted record. */
export const handler = apiHandler({
  handle: async ({ ctx, params }) => json(200, presentDataSource((await deleteDataSource(ctx, params.id!)).dataSource)),
});
