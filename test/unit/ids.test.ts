import { describe, expect, it } from 'vitest';
import { idSeedOf, newId, withIdSeed } from '#shared/ids.ts';

const scope = { tenantId: 't', userId: 'u', route: 'POST /documents/{shareable_uuid}/refresh', key: 'predictable-key', requestHash: 'h' };
const idsFor = (secret: string, s = scope) => withIdSeed(idSeedOf(Buffer.from(secret), s), async () => [newId(), newId()]);

describe('idempotent id seeds', () => {
  it('are keyed by the server secret: the same request gives other ids under another secret', async () => {
    const [a, b] = await Promise.all([idsFor('secret-a'), idsFor('secret-b')]);
    expect(a[0]).not.toBe(b[0]);
    expect(a[1]).not.toBe(b[1]);
  });

  it('are deterministic for the same secret and request, so a retry names the same records', async () => {
    const first = await idsFor('secret-a');
    expect(await idsFor('secret-a')).toEqual(first);
    expect(first[0]).not.toBe(first[1]);
    expect(first[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('change with every part of the request', async () => {
    const first = (await idsFor('secret-a'))[0];
    for (const part of ['tenantId', 'userId', 'route', 'key', 'requestHash'] as const) {
      expect((await idsFor('secret-a', { ...scope, [part]: `${scope[part]}x` }))[0], part).not.toBe(first);
    }
  });
});
