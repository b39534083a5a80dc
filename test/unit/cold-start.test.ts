import { afterEach, describe, expect, it, vi } from 'vitest';

describe('configuration at cold start', () => {
  const saved = process.env.TABLE_NAME;
  afterEach(() => {
    process.env.TABLE_NAME = saved;
    vi.resetModules();
  });

  it('an authenticated handler refuses to load without TABLE_NAME, a public one loads', async () => {
    delete process.env.TABLE_NAME;
    vi.resetModules();
    await expect(import('../../functions/users/get.ts')).rejects.toThrow(/TABLE_NAME/);
    await expect(import('../../functions/platform/openapi.ts')).resolves.toHaveProperty('handler');
  });
});
