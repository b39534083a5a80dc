import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '#shared/openapi.ts';
import { routes } from '#shared/routes/index.ts';

describe('OpenAPI document', () => {
  const doc = buildOpenApiDocument() as unknown as {
    paths: Record<string, Record<string, { security?: unknown[]; 'x-extension'?: boolean }>>;
  };

  it('is committed up to date as docs/openapi.json (run `npm run openapi`)', () => {
    expect(JSON.parse(readFileSync('docs/openapi.json', 'utf8'))).toEqual(JSON.parse(JSON.stringify(doc)));
  });

  it('documents every route of the route table, with bearer security exactly on JWT routes', () => {
    for (const r of routes) {
      const op = doc.paths[r.path]?.[r.method.toLowerCase()];
      expect(op, `${r.method} ${r.path}`).toBeDefined();
      expect((op!.security ?? []).length > 0, `${r.method} ${r.path} security`).toBe(r.auth === 'jwt');
    }
  });
});
