import * as z from 'zod';
import { GRANTABLE_SCOPES } from '#shared/auth/scopes.ts';

export const name = z.string().trim().min(1).max(200);
export const scopes = z
  .array(z.enum(GRANTABLE_SCOPES))
  .min(1)
  .max(GRANTABLE_SCOPES.length * 2)
  .meta({ description: 'The scopes its tokens may carry (contract section 17); `service_accounts` is never grantable' });
