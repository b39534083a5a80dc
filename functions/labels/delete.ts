import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { deleteLabel, labelAccessSource, labelChecks } from '#shared/domain/labels/service.ts';
import { presentLabel } from '#shared/presenters/directory.ts';

/** 200 with the deleted label in the get wrapper; a group's children are deleted with it. */
export const handler = apiHandler({
  handle: async ({ ctx, params }) => {
    const label = await deleteLabel(ctx, params.id!);
    return recordResponse(200, 'label', presentLabel(label), labelChecks(ctx, label), labelAccessSource(ctx, label));
  },
});
