import { describe, expect, it } from 'vitest';
import { limiterBudget, sendLater } from '../../functions/workers/data-source-sync.ts';
import { DATA_SOURCE_SYNC_CONCURRENCY, DATA_SOURCE_SYNC_QUEUE, type SyncMessage } from '#shared/domain/integrations/entity.ts';
import { RateLimitedError } from '#shared/errors.ts';
import { integrationWorkers } from '#shared/routes/integrations.ts';

/* The sync worker's bounds (contract 19): its row's concurrency and budget, and the limiter's answers as the domain reads them. */

describe('data-source sync worker', () => {
  it('is declared with a bounded concurrency, the limiter defaults, and a send to its own queue (a refused run sent again)', () => {
    const row = integrationWorkers.find((w) => w.queue === DATA_SOURCE_SYNC_QUEUE)!;
    expect(row).toMatchObject({
      handler: 'functions/workers/data-source-sync.ts',
      maxConcurrency: DATA_SOURCE_SYNC_CONCURRENCY,
      rateLimited: true,
      sendsTo: [DATA_SOURCE_SYNC_QUEUE],
    });
    // SQS's maximum concurrency of an event source is 2 to 1000; a few invocations of batches of 5 are enough
    expect(DATA_SOURCE_SYNC_CONCURRENCY).toBeGreaterThanOrEqual(2);
    expect(DATA_SOURCE_SYNC_CONCURRENCY * row.batchSize).toBeLessThanOrEqual(50);
  });

  it("reads the limiter's admission as granted, its 429 as refused with the wait it names, anything else as an error", async () => {
    const asked: string[] = [];
    const admit = limiterBudget(async (t, u) => void asked.push(`${t}/${u}`));
    expect(await admit('t1', 'creator')).toEqual({ granted: true });
    expect(asked).toEqual(['t1/creator']);
    const refuse = limiterBudget(async () => {
      throw new RateLimitedError(3.2);
    });
    expect(await refuse('t1', 'creator')).toEqual({ granted: false, retryAfterSeconds: 4 });
    const broken = limiterBudget(async () => {
      throw new Error('boom');
    });
    await expect(broken('t1', 'creator')).rejects.toThrow('boom');
  });

  it('sends a deferred run to the sync queue, delayed', async () => {
    const sent: Array<[string, unknown, unknown]> = [];
    const later = sendLater({ send: async (q, body, opts) => (sent.push([q, body, opts]), 'id') });
    const msg: SyncMessage = { version: 1, tenant_uuid: 't', data_source_uuid: 'd', run: 'manual-1', trigger: 'manual' };
    await later(msg, 8);
    expect(sent).toEqual([[DATA_SOURCE_SYNC_QUEUE, msg, { delaySeconds: 8 }]]);
  });
});
