import { scimHandler, scimJson } from '#shared/scim/handler.ts';
import { serviceProviderConfig } from '#shared/scim/resources.ts';

export const handler = scimHandler({ handle: async () => scimJson(200, serviceProviderConfig()) });
