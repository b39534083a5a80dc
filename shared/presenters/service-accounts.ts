/** Service account presentation, above the domain: never the secret's hash; the secret itself only when just made. */
import type { z } from 'zod';
import type { ServiceAccountRecord } from '#shared/domain/service-accounts/entity.ts';
import type { ServiceAccountRecordSchema, ServiceAccountWithSecretSchema } from '#shared/schemas/service-accounts.ts';

export const presentServiceAccount = (a: ServiceAccountRecord): z.infer<typeof ServiceAccountRecordSchema> => ({
  uuid: a.uuid,
  name: a.name,
  scopes: a.scopes,
  status: a.status,
  client_id: a.client_id,
  secret_rotated_at: a.secret_rotated_at,
  created_at: a.created_at,
  updated_at: a.updated_at,
});

/** The create's and rotate_secret's record: the account with its `client_secret`, shown only there. */
export const presentServiceAccountWithSecret = (
  a: ServiceAccountRecord,
  secret: string,
): z.infer<typeof ServiceAccountWithSecretSchema> => {
  const { secret_rotated_at, created_at, updated_at, ...rest } = presentServiceAccount(a);
  return { ...rest, client_secret: secret, secret_rotated_at, created_at, updated_at };
};
