import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { createLabel, labelAccessSource, labelChecks } from '#shared/domain/labels/service.ts';
import { presentLabel } from '#shared/presenters/directory.ts';
import { LabelCreateBody } from '#shared/schemas/labels.ts';

export const handler = apiHandler({
  body: LabelCreateBody,
  handle: async ({ ctx, body }) => {
    const label = await createLabel(ctx, body);
    return recordResponse(201, 'label', presentLabel(label), labelChecks(ctx, label), labelAccessSource(ctx, label));
  },
});
