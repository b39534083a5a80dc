import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { importRows } from '#shared/domain/imports/parse.ts';
import { importChecks, startImport } from '#shared/domain/imports/service.ts';
import { presentImport } from '#shared/presenters/imports.ts';
import { requireContentWriter } from '#shared/auth/permissions.ts';
import { IMPORT_MEDIA_TYPES } from '#shared/domain/imports/entity.ts';

export const handler = apiHandler({
  accepts: IMPORT_MEDIA_TYPES,
  body: () => import('#shared/schemas/bodies/import-envelope.ts').then((m) => m.ImportEnvelope),
  handle: async ({ ctx, body, rawBody }) => {
    const record = await startImport(ctx, await importRows(rawBody ? { csv: rawBody.text } : { json: body.goals }));
    return recordResponse(202, 'import', presentImport(record), importChecks(ctx), 'creator');
  },
  authorizeReplay: ({ ctx }) => requireContentWriter(ctx.caller),
});
