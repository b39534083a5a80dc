import { validateBody } from '#shared/http/api.ts';
import { scimHandler, scimJson } from '#shared/scim/handler.ts';
import { patchScimUser } from '#shared/scim/users.ts';

export const handler = scimHandler({
  body: () => import('#shared/schemas/bodies/scim.ts').then((m) => m.ScimPatchBody),
  handle: async ({ ctx, params, body }) => {
    const { ScimUserBody } = await import('#shared/schemas/bodies/scim.ts');
    return scimJson(200, await patchScimUser(ctx, params.id!, body.Operations, (patched) => validateBody(ScimUserBody, patched)));
  },
});
