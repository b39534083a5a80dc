import { scimHandler } from '#shared/scim/handler.ts';
import { deactivateScimUser } from '#shared/scim/users.ts';

/** Deprovisioning deactivates: 204, the user kept with status inactive. */
export const handler = scimHandler({
  handle: async ({ ctx, params }) => {
    await deactivateScimUser(ctx, params.id!);
    return { statusCode: 204, headers: {}, body: '' };
  },
});
