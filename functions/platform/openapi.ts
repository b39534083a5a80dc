import { json, publicHandler } from '#shared/http/api.ts';
import { buildOpenApiDocument } from '#shared/openapi.ts';

const document = buildOpenApiDocument();

export const handler = publicHandler(async () => json(200, document));
