import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

process.env.ID_SEED_KEY_FILE = join(mkdtempSync(join(tmpdir(), 'cursor-key-')), 'id-seed-key');
const { openCursor, sealCursor } = await import('#shared/list/cursor.ts');

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

describe('list cursors', () => {
  it('opens the cursor it sealed, and refuses one whose MAC differs only in the padding bits of its last character', async () => {
    const cursor = await sealCursor('binding', { k: '2026-01-01T00:00:00.000Z#x' });
    expect(await openCursor('binding', cursor)).toEqual({ k: '2026-01-01T00:00:00.000Z#x' });
    const [prefix, payload, mac] = cursor.split('.') as [string, string, string];
    // 16 bytes are 22 characters, the last carrying 2 bits and 4 of padding: flipping a padding bit decodes the same
    const last = B64.indexOf(mac.at(-1)!);
    const twin = `${prefix}.${payload}.${mac.slice(0, -1)}${B64[last ^ 1]}`;
    expect(Buffer.from(twin.split('.')[2]!, 'base64url')).toEqual(Buffer.from(mac, 'base64url'));
    await expect(openCursor('binding', twin)).rejects.toMatchObject({ status: 400 });
  });
});
