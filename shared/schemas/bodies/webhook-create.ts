import * as z from 'zod';
import { description, events, url } from '#shared/schemas/bodies/webhook-fields.ts';

export const WebhookCreateBody = z.strictObject({ url, events, description: description.optional() }).meta({ id: 'WebhookCreateBody' });
