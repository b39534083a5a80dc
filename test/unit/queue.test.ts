import { describe, expect, it } from 'vitest';
import { LocalQueues } from '#shared/queue/queue.ts';

describe('LocalQueues (SQS semantics in-process)', () => {
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
});
