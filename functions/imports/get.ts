import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { getImport, importChecks } from '#shared/domain/imports/service.ts';
import { presentImportInFull } from '#shared/presenters/imports.ts';

export const handler = apiHandler({
  handle: async ({ ctx, params }) => {
    const record = await getImport(ctx, params.id!);
    return recordResponse(
      200,
      'import',
      await presentImportInFull(ctx, record),
      importChecks(ctx),
      record.creator_uuid === ctx.caller.userId ? 'creator' : 'admin',
    );
  },
});
