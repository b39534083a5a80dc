import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { documentCollectionChecks, listDocuments } from '#shared/domain/sharing/document-list.ts';
import { presentDocumentSummary } from '#shared/presenters/sharing.ts';

export const handler = apiHandler({
  handle: async ({ ctx, query }) => {
    const result = await listDocuments(ctx, query);
    return listResponse(
      'document',
      result,
      result.records.map((d) => presentDocumentSummary(ctx.caller, d)),
      documentCollectionChecks(ctx.caller),
    );
  },
});
