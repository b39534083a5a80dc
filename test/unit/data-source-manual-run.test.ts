import { describe, expect, it } from 'vitest';
import { manualRun } from '#shared/domain/integrations/sync.ts';
import { withIdSeed } from '#shared/ids.ts';

const tenant = '00000000-0000-4000-8000-000000000001';
const source = '00000000-0000-4000-8000-000000000002';

describe('the run a POST /data_sources/{id}/sync names', () => {
  it('is the same for a retry of the same keyed request (a crash after the queue send queues the same run, not a second)', async () => {
    const first = await withIdSeed('seed-of-the-request', async () => manualRun(tenant, source));
    const retry = await withIdSeed('seed-of-the-request', async () => manualRun(tenant, source));
    expect(retry.run).toBe(first.run);
    expect(first).toMatchObject({
      tenant_uuid: tenant,
      data_source_uuid: source,
      trigger: 'manual',
      run: expect.stringMatching(/^manual-/),
    });
    const other = await withIdSeed('another-request', async () => manualRun(tenant, source));
    expect(other.run).not.toBe(first.run);
  });

  it('is new on every request without a key', () => {
    expect(manualRun(tenant, source).run).not.toBe(manualRun(tenant, source).run);
  });
});
