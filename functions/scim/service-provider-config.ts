import { scimHandler, scimJson } from '#shared/scim/handler.ts';
import { SERVICE_PROVIDER_CONFIG } from '#shared/scim/resources.ts';

export const handler = scimHandler({ handle: async () => scimJson(200, SERVICE_PROVIDER_CONFIG) });
