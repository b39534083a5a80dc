import { describe, expect, it } from 'vitest';
import { SCOPES } from '#shared/auth/scopes.ts';
import { routes } from '#shared/routes/index.ts';

/** Generated from the route table: a new authenticated row without a scope fails here (and in test/e2e/scopes.test.ts). */
describe('every authenticated route names its scope', () => {
  const rowName = (r: (typeof routes)[number]) => `${r.method} ${r.path}`;
  it.each(routes.filter((r) => r.auth === 'jwt').map((r) => [rowName(r), r] as const))('%s', (_, r) => {
    expect(r.scope, `${rowName(r)} names no scope`).toBeDefined();
    expect(SCOPES).toContain(r.scope);
    // reads never need a write scope, so a read-only credential reads everything of its area
    if (r.method === 'GET') expect(r.scope).not.toMatch(/:write$/);
  });

  it('public routes need none', () => {
    expect(routes.filter((r) => r.auth === 'public' && r.scope)).toEqual([]);
  });
});
