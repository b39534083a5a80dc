import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { labelAccessSource, labelChecks, updateLabel } from '#shared/domain/labels/service.ts';
import { presentLabel } from '#shared/presenters/directory.ts';

export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/label-update.ts').then((m) => m.LabelUpdateBody),
  handle: async ({ ctx, params, body }) => {
    const label = await updateLabel(ctx, params.id!, body);
    return recordResponse(200, 'label', presentLabel(label), labelChecks(ctx, label), labelAccessSource(ctx, label));
  },
});
