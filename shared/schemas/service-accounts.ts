import * as z from 'zod';
import { GRANTABLE_SCOPES } from '#shared/auth/scopes.ts';
import { SERVICE_ACCOUNT_STATUSES } from '#shared/domain/service-accounts/entity.ts';
import { listEnvelope, recordEnvelope } from '#shared/schemas/common.ts';

/** The bodies are built in shared/schemas/bodies/service-account-*.ts (a handler loads its own on first use); re-exported for the route table. */
export { ServiceAccountCreateBody } from '#shared/schemas/bodies/service-account-create.ts';
export { ServiceAccountUpdateBody } from '#shared/schemas/bodies/service-account-update.ts';

const fields = {
  uuid: z.string(),
  name: z.string(),
  scopes: z.array(z.enum(GRANTABLE_SCOPES)),
  status: z.enum(SERVICE_ACCOUNT_STATUSES),
  client_id: z.string().meta({ description: 'The OAuth client_id for POST /oauth/token' }),
};
const times = { secret_rotated_at: z.string(), created_at: z.string(), updated_at: z.string() };
export const ServiceAccountRecordSchema = z.object({ ...fields, ...times }).meta({ id: 'ServiceAccount' });
export const ServiceAccountWithSecretSchema = z
  .object({
    ...fields,
    client_secret: z
      .string()
      .meta({ description: 'Shown only in this response (create, rotate_secret): store it now. Only a hash is kept.' }),
    ...times,
  })
  .meta({ id: 'ServiceAccountWithSecret' });

export const ServiceAccountResponse = recordEnvelope('service_account', ServiceAccountRecordSchema);
export const ServiceAccountWithSecretResponse = recordEnvelope('service_account', ServiceAccountWithSecretSchema);
export const ServiceAccountListResponse = listEnvelope('service_account', ServiceAccountRecordSchema);

/** POST /oauth/token (RFC 6749 sections 4.4 and 5.1). */
export const TokenRequestBody = z
  .object({
    grant_type: z.literal('client_credentials'),
    client_id: z.string().optional().meta({ description: 'With client_secret, unless sent as HTTP Basic' }),
    client_secret: z.string().optional(),
    scope: z.string().optional().meta({ description: "Space-separated; a subset of the account's scopes (default: all of them)" }),
  })
  .meta({ id: 'TokenRequest' });
export const TokenResponse = z
  .object({
    access_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int(),
    scope: z.string(),
  })
  .meta({ id: 'TokenResponse' });
export const OAuthErrorResponse = z
  .object({
    error: z.enum(['invalid_request', 'invalid_client', 'unsupported_grant_type', 'invalid_scope', 'rate_limited']),
    error_description: z.string(),
  })
  .meta({ id: 'OAuthError' });
