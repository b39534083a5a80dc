import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { importChecks, listImports } from '#shared/domain/imports/service.ts';
import { presentImport } from '#shared/presenters/imports.ts';

export const handler = apiHandler({
  handle: async ({ ctx, query }) => {
    const result = await listImports(ctx, query);
    return listResponse(
      'import',
      result,
      result.records.map((r) => presentImport(r)),
      importChecks(ctx),
    );
  },
});
