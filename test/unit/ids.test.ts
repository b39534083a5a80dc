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

describe('the id seed secret on the local stack', () => {
  it('is a random 32-byte key kept in a file of the data dir (0600), read back the same', async () => {
    const { mkdtempSync, readFileSync, statSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const file = join(mkdtempSync(join(tmpdir(), 'id-seed-')), 'nested', 'id-seed-key');
    process.env.ID_SEED_KEY_FILE = file;
    try {
      const { idSeedSecret } = await import('#shared/auth/id-seed-secret.ts');
      const secret = Buffer.from(await idSeedSecret());
      expect(secret).toHaveLength(32);
      expect(Buffer.from(readFileSync(file, 'utf8'), 'base64')).toEqual(secret);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    } finally {
      delete process.env.ID_SEED_KEY_FILE;
    }
  });
});
