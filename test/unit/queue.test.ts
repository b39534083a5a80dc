import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId, withIdSeed } from '#shared/ids.ts';
import { LocalQueues, MessageFiles } from '#shared/queue/queue.ts';

describe('LocalQueues (SQS semantics in-process)', () => {
  it("runs workers outside the sender's async context: a request's seeded ids never reach a worker", async () => {
    const drawn: string[] = [];
    const q = new LocalQueues({ pollMs: 5 });
    q.register({
      queue: 'jobs',
      maxReceiveCount: 1,
      batchSize: 1,
      timeoutSeconds: 1,
      maxConcurrency: 1,
      handler: async () => async () => void drawn.push(newId(), newId()),
    });
    q.start();
    // Two sends under the same seed: a leaking context would make the worker draw the same two ids twice.
    await withIdSeed('request-seed', () => q.send('jobs', { n: 1 }));
    await withIdSeed('request-seed', () => q.send('jobs', { n: 2 }));
    const seeded = await withIdSeed('request-seed', async () => [newId(), newId()]);
    const deadline = Date.now() + 5000;
    while (drawn.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    q.stop();
    expect(drawn).toHaveLength(4);
    expect(new Set(drawn).size).toBe(4);
    for (const id of seeded) expect(drawn).not.toContain(id);
  });

  it('delivers, retries failed messages with back-off, and dead-letters after maxReceiveCount receives', async () => {
    const seen: Array<{ body: string; receive: string }> = [];
    const q = new LocalQueues({ baseBackoffMs: 5, pollMs: 5 });
    q.register({
      queue: 'jobs',
      maxReceiveCount: 3,
      batchSize: 10,
      timeoutSeconds: 1,
      maxConcurrency: 1,
      handler: async () => async (event) => {
        for (const r of event.Records) seen.push({ body: r.body, receive: r.attributes.ApproximateReceiveCount });
        // partial batch failure: only "bad" fails
        return { batchItemFailures: event.Records.filter((r) => JSON.parse(r.body).bad).map((r) => ({ itemIdentifier: r.messageId })) };
      },
    });
    q.start();
    await q.send('jobs', { n: 1 });
    await q.send('jobs', { bad: true });
    const deadline = Date.now() + 5000;
    while (q.deadLetters.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    q.stop();
    expect(seen.filter((s) => s.body === '{"n":1}')).toHaveLength(1);
    expect(seen.filter((s) => s.body === '{"bad":true}').map((s) => s.receive)).toEqual(['1', '2', '3']);
    expect(q.deadLetters).toMatchObject([{ queue: 'jobs', body: { bad: true }, receiveCount: 3 }]);
    expect(q.pending('jobs')).toBe(0);
  });

  it('redelivers a whole batch when the handler throws (at-least-once)', async () => {
    let calls = 0;
    const q = new LocalQueues({ baseBackoffMs: 1, pollMs: 5 });
    q.register({
      queue: 'flaky',
      maxReceiveCount: 5,
      batchSize: 10,
      timeoutSeconds: 1,
      maxConcurrency: 1,
      handler: async () => async () => {
        calls++;
        if (calls === 1) throw new Error('boom');
      },
    });
    q.start();
    await q.send('flaky', { x: 1 });
    const deadline = Date.now() + 5000;
    while ((q.pending('flaky') > 0 || calls < 2) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    q.stop();
    expect(calls).toBe(2);
    expect(q.deadLetters).toHaveLength(0);
  });

  it('runs up to maxConcurrency batches at once, never more, each of up to batchSize messages', async () => {
    let running = 0;
    let most = 0;
    const sizes: number[] = [];
    const release: Array<() => void> = [];
    const q = new LocalQueues({ pollMs: 5 });
    q.register({
      queue: 'jobs',
      maxReceiveCount: 1,
      batchSize: 4,
      timeoutSeconds: 30,
      maxConcurrency: 3,
      handler: async () => async (event) => {
        running++;
        most = Math.max(most, running);
        sizes.push(event.Records.length);
        await new Promise<void>((r) => release.push(r));
        running--;
      },
    });
    for (let i = 0; i < 20; i++) await q.send('jobs', { i });
    q.start();
    const wait = async (cond: () => boolean) => {
      const deadline = Date.now() + 5000;
      while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    };
    await wait(() => release.length === 3);
    await new Promise((r) => setTimeout(r, 50)); // polls meanwhile start no fourth batch
    expect(running).toBe(3);
    // each batch that ends lets the next start (a send starts one at once, as a poll finding it would), until the
    // 20 messages are done
    const done = () => sizes.reduce((a, b) => a + b, 0) === 20 && running === 0;
    while (!done()) {
      release.shift()?.();
      await wait(() => release.length > 0 || done());
    }
    q.stop();
    expect(most).toBe(3);
    expect(Math.max(...sizes)).toBe(4);
    expect(q.pending('jobs')).toBe(0);
  });

  it('waits up to the batch window for a full batch, then sends what is ready', async () => {
    const batches: Array<{ size: number; at: number }> = [];
    const q = new LocalQueues({ pollMs: 5 });
    q.register({
      queue: 'jobs',
      maxReceiveCount: 1,
      batchSize: 3,
      timeoutSeconds: 30,
      maxConcurrency: 2,
      batchWindowSeconds: 0.3,
      handler: async () => async (event) => void batches.push({ size: event.Records.length, at: Date.now() }),
    });
    q.start();
    const sent = Date.now();
    await q.send('jobs', { n: 1 });
    await q.send('jobs', { n: 2 });
    const deadline = Date.now() + 5000;
    while (!batches.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    // a full batch leaves at once
    await q.send('jobs', { n: 3 });
    await q.send('jobs', { n: 4 });
    await q.send('jobs', { n: 5 });
    while (batches.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    const full = Date.now();
    q.stop();
    expect(batches.map((b) => b.size)).toEqual([2, 3]);
    expect(batches[0]!.at - sent).toBeGreaterThanOrEqual(300);
    expect(batches[1]!.at - batches[0]!.at).toBeLessThan(300);
    expect(full - batches[1]!.at).toBeLessThan(300);
  });

  it('takes the visible messages only, earliest visible first: delayed ones wait in the heap untouched', async () => {
    const seen: number[] = [];
    const q = new LocalQueues({ pollMs: 5 });
    q.register({
      queue: 'jobs',
      maxReceiveCount: 1,
      batchSize: 10,
      timeoutSeconds: 30,
      maxConcurrency: 1,
      handler: async () => async (event) => void seen.push(...event.Records.map((r) => JSON.parse(r.body).n)),
    });
    for (let n = 0; n < 5000; n++) await q.send('jobs', { n }, { delaySeconds: 60 });
    await q.send('jobs', { n: -1 });
    q.start();
    const deadline = Date.now() + 5000;
    while (q.pending('jobs') > 5000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    q.stop();
    expect(seen).toEqual([-1]);
    expect(q.pending('jobs')).toBe(5000);
    expect(q.stats().jobs).toMatchObject({ pending: 5000, inFlight: 0 });
  });

  it('refuses unknown queues', async () => {
    await expect(new LocalQueues().send('nope', {})).rejects.toThrow(/Unknown queue/);
  });

  it('keeps messages on disk: a new process over the same directory delivers what a killed one had not finished, and files from outside (redrive)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'queues-'));
    const messageFiles = () => readdirSync(join(dir, 'jobs')).filter((f) => f.endsWith('.json'));
    try {
      // The first "process" takes messages and dies mid-handling (its handler never returns).
      const first = new LocalQueues({ pollMs: 5, dir });
      first.register({
        queue: 'jobs',
        maxReceiveCount: 5,
        batchSize: 10,
        timeoutSeconds: 30,
        maxConcurrency: 1,
        handler: async () => () => new Promise(() => undefined),
      });
      await first.send('jobs', { n: 1 });
      await first.send('jobs', { n: 2 });
      first.start();
      await new Promise((r) => setTimeout(r, 50));
      first.stop();
      expect(messageFiles()).toHaveLength(2);

      const seen: string[] = [];
      const second = new LocalQueues({ pollMs: 5, dir });
      second.register({
        queue: 'jobs',
        maxReceiveCount: 5,
        batchSize: 10,
        timeoutSeconds: 30,
        maxConcurrency: 1,
        handler: async () => async (e) => void seen.push(...e.Records.map((r) => `${r.body}@${r.attributes.ApproximateReceiveCount}`)),
      });
      second.start();
      new MessageFiles(dir).submit('jobs', {
        id: 'from-outside',
        body: '{"n":3}',
        receiveCount: 0,
        visibleAt: Date.now(),
        sentAt: Date.now(),
      });
      const deadline = Date.now() + 5000;
      while (seen.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      second.stop();
      // Each delivered once by the second process; the one in flight at the "kill" on its second receive.
      expect(seen.map((x) => x.split('@')[0]).sort()).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
      expect(seen).toContain('{"n":1}@2');
      expect(seen).toContain('{"n":3}@1');
      // a message's file goes once its handler has returned, just after `seen` has it
      const gone = Date.now() + 5000;
      while (messageFiles().length && Date.now() < gone) await new Promise((r) => setTimeout(r, 10));
      expect(messageFiles()).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
