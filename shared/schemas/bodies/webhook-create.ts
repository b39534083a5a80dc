import * as z from 'zod';
import type { WebhookCreateInput } from '#shared/domain/webhooks/decide.ts';
import { description, events, url } from '#shared/schemas/bodies/webhook-fields.ts';

export const WebhookCreateBody = z.strictObject({ url, events, description: description.optional() }).meta({ id: 'WebhookCreateBody' });
/** The wire body maps onto the domain's webhook command: a drift fails the build here. */
export const toWebhookCreateInput = (body: z.infer<typeof WebhookCreateBody>): WebhookCreateInput => body;
