import * as z from 'zod';
import { name, scopes } from '#shared/schemas/bodies/service-account-fields.ts';

export const ServiceAccountCreateBody = z.strictObject({ name, scopes }).meta({ id: 'ServiceAccountCreateBody' });
