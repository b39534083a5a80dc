import { referenceScript } from '#shared/docs/api-reference.ts';
import { publicHandler } from '#shared/http/api.ts';

export const handler = publicHandler(async ({ event }) => referenceScript(event.headers?.['accept-encoding']));
