import { scimHandler } from '#shared/scim/handler.ts';
import { deleteScimGroup } from '#shared/scim/groups.ts';

/** The team is deleted: 204 (409 while goals or active sub-teams use it). */
export const handler = scimHandler({
  handle: async ({ ctx, params }) => {
    await deleteScimGroup(ctx, params.id!);
    return { statusCode: 204, headers: {}, body: '' };
  },
});
