import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '#shared/openapi.ts';
import { routes } from '#shared/routes/index.ts';

describe('OpenAPI: safe retries and limits (contract section 11)', () => {
  const doc = buildOpenApiDocument() as any;
  const op = (r: (typeof routes)[number]) => doc.paths[r.path][r.method.toLowerCase()];

  it('shows the Idempotency-Key header on every POST, with 409/422 for its errors (SCIM: 409/400 invalidValue) and Idempotent-Replayed on success', () => {
    const posts = routes.filter((r) => r.method === 'POST' && r.auth === 'jwt');
    expect(posts.length).toBeGreaterThan(5);
    for (const r of posts) {
      const o = op(r);
      expect(o.parameters).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
      expect(o.responses['409'].description).toMatch(/idempotency_key_in_use/);
      // SCIM has no 422 (RFC 7644 3.12): a reused key is 400 invalidValue there
      if (r.path.startsWith('/scim/'))
        expect(o.responses['400'].description).toMatch(/invalidValue: this Idempotency-Key was used with another body/);
      else expect(o.responses['422'].description).toMatch(/idempotency_key_reused/);
      expect(o.responses[String(r.doc.success.status)].headers['Idempotent-Replayed']).toBeDefined();
    }
    expect(doc.components.parameters.IdempotencyKey.schema).toMatchObject({ minLength: 1, maxLength: 255 });
  });

  it('documents the limits and the transport errors on every authenticated operation', () => {
    for (const r of routes.filter((x) => x.auth === 'jwt')) {
      const o = op(r);
      expect(o.responses['429'].headers['Retry-After']).toBeDefined();
      expect(o.responses[String(r.doc.success.status)].headers.RateLimit).toBeDefined();
      expect(o.responses[String(r.doc.success.status)].headers['RateLimit-Policy']).toBeDefined();
      expect(o.responses['413']).toBeDefined();
      expect(o.responses['431']).toBeDefined();
      // SCIM's paths answer their errors as application/scim+json (shared/routes/scim.ts)
      if (r.doc.body)
        expect(o.responses['415'].content[r.path.startsWith('/scim/') ? 'application/scim+json' : 'application/json']).toBeDefined();
      if (r.method !== 'POST') expect(o.parameters ?? []).not.toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
    }
  });
});
