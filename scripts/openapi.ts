/** `npm run openapi` — regenerates docs/openapi.json from the route table and zod schemas. */
import { writeFileSync } from 'node:fs';
import { buildOpenApiDocument } from '#shared/openapi.ts';

writeFileSync('docs/openapi.json', `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
console.log('wrote docs/openapi.json');
