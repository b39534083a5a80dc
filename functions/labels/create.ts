import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { createLabel, labelAccessSource, labelChecks } from '#shared/domain/labels/service.ts';
import { presentLabel } from '#shared/presenters/directory.ts';
import { requireContentWriter } from '#shared/auth/permissions.ts';

export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/label-create.ts').then((m) => m.LabelCreateBody),
  handle: async ({ ctx, body }) => {
    const label = await createLabel(ctx, body);
    return recordResponse(201, 'label', presentLabel(label), labelChecks(ctx, label), labelAccessSource(ctx, label));
  },
  authorizeReplay: ({ ctx }) => requireContentWriter(ctx.caller), // the create's precheck (labelCreateRefusal), thrown
});
