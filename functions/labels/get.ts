import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { labelAccessSource, labelChecks, showLabel } from '#shared/domain/labels/service.ts';
import { presentLabel } from '#shared/presenters/directory.ts';

export const handler = apiHandler({
  handle: async ({ ctx, params }) => {
    const label = await showLabel(ctx, params.id!);
    return recordResponse(200, 'label', presentLabel(label), labelChecks(ctx, label), labelAccessSource(ctx, label));
  },
});
