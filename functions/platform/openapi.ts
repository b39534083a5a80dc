import { json, publicHandler } from '#shared/http/api.ts';
import { buildOpenApiDocument } from '#shared/openapi.ts';

// Built on the first request, not at cold start; then kept for the container's lifetime.
let document: ReturnType<typeof buildOpenApiDocument> | undefined;

export const handler = publicHandler(async () => json(200, (document ??= buildOpenApiDocument())));
