import * as z from 'zod';
import { SERVICE_ACCOUNT_STATUSES } from '#shared/domain/service-accounts/entity.ts';
import { name, scopes } from '#shared/schemas/bodies/service-account-fields.ts';

export const ServiceAccountUpdateBody = z
  .strictObject({ name: name.optional(), scopes: scopes.optional(), status: z.enum(SERVICE_ACCOUNT_STATUSES).optional() })
  .meta({
    id: 'ServiceAccountUpdateBody',
    description:
      "Disabling refuses the account's tokens at once, those already issued included; scopes apply at once too: a token acts with the scopes both it and the account hold now (contract 19).",
  });
