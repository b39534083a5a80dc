import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { routes } from '#shared/routes/index.ts';

/**
 * An Idempotency-Key replay returns a stored answer without running the handler, so every POST route must
 * declare the permission checks a replay passes first (apiHandler's `authorizeReplay`); without one, a caller
 * who lost the right (a demoted admin) would be handed the first answer again.
 */
describe('replay gates', () => {
  it('every authenticated POST route declares authorizeReplay', () => {
    const posts = routes.filter((r) => r.method === 'POST' && r.auth === 'jwt');
    expect(posts.length).toBeGreaterThan(10);
    const missing = [...new Set(posts.map((r) => r.handler))].filter((h) => !/\n {2}authorizeReplay: /.test(readFileSync(h, 'utf8')));
    expect(missing).toEqual([]);
  });
});
