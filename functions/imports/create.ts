import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { parseImportBody } from '#shared/domain/imports/parse.ts';
import { importChecks, presentImport, startImport } from '#shared/domain/imports/service.ts';

export const handler = apiHandler({
  rawBody: true,
  handle: async ({ ctx, event }) => {
    const text = event.body === undefined ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
    const record = await startImport(ctx, parseImportBody(text, event.headers?.['content-type']));
    return recordResponse(202, 'import', presentImport(record), importChecks(ctx), 'creator');
  },
});
