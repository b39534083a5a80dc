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

  it('refuses unknown queues', async () => {
    await expect(new LocalQueues().send('nope', {})).rejects.toThrow(/Unknown queue/);
  });

  it('keeps messages on disk: a new process over the same directory delivers what a killed one had not finished, and files from outside (redrive)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'queues-'));
    try {
      // The first "process" takes messages and dies mid-handling (its handler never returns).
      const first = new LocalQueues({ pollMs: 5, dir });
      first.register({
        queue: 'jobs',
        maxReceiveCount: 5,
        batchSize: 10,
        timeoutSeconds: 30,
        handler: async () => () => new Promise(() => undefined),
      });
      await first.send('jobs', { n: 1 });
      await first.send('jobs', { n: 2 });
      first.start();
      await new Promise((r) => setTimeout(r, 50));
      first.stop();
      expect(readdirSync(join(dir, 'jobs'))).toHaveLength(2);

      const seen: string[] = [];
      const second = new LocalQueues({ pollMs: 5, dir });
      second.register({
        queue: 'jobs',
        maxReceiveCount: 5,
        batchSize: 10,
        timeoutSeconds: 30,
        handler: async () => async (e) => void seen.push(...e.Records.map((r) => `${r.body}@${r.attributes.ApproximateReceiveCount}`)),
      });
      second.start();
      new MessageFiles(dir).save('jobs', {
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
      while (readdirSync(join(dir, 'jobs')).length && Date.now() < gone) await new Promise((r) => setTimeout(r, 10));
      expect(readdirSync(join(dir, 'jobs'))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
