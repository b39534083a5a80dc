import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { labelAccessSource, labelChecks, presentLabel, showLabel } from '#shared/domain/labels/service.ts';

export const handler = apiHandler({
  handle: async ({ ctx, params }) => {
    const label = await showLabel(ctx, params.id!);
    return recordResponse(200, 'label', presentLabel(label), labelChecks(ctx, label), labelAccessSource(ctx, label));
  },
});
