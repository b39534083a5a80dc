import { validateBody } from '#shared/http/api.ts';
import { scimHandler, scimJson } from '#shared/scim/handler.ts';
import { patchScimGroup } from '#shared/scim/groups.ts';

export const handler = scimHandler({
  body: () => import('#shared/schemas/bodies/scim.ts').then((m) => m.ScimPatchBody),
  handle: async ({ ctx, params, body }) => {
    const { ScimGroupBody } = await import('#shared/schemas/bodies/scim.ts');
    return scimJson(200, await patchScimGroup(ctx, params.id!, body.Operations, (patched) => validateBody(ScimGroupBody, patched)));
  },
});
