import { json, publicHandler } from '#shared/http/api.ts';

// The builder (zod-to-openapi, every route's schemas) is imported and run on the first request, not at cold
// start; the document is then kept for the container's lifetime.
let document: Promise<unknown> | undefined;

export const handler = publicHandler(async () =>
  json(200, await (document ??= import('#shared/openapi.ts').then((m) => m.buildOpenApiDocument()))),
);
