import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { fanOut, redeliver } from '#shared/domain/webhooks/deliveries.ts';
import type { QueueSender } from '#shared/queue/queue.ts';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '#shared/db/keys.ts';
import { DELIVERY_LOG_DAYS, WEBHOOK_DELIVERY_CONCURRENCY, WEBHOOK_DELIVERY_QUEUE } from '#shared/domain/webhooks/entity.ts';
import type { IdentifiedEvent } from '#shared/domain/webhooks/events.ts';
import { expectError, listAll, newTenant, type TenantFixture } from '../support/api.ts';
import { deliveryWorkerQueues, eventually, startReceiver } from './webhooks.fixture.ts';
import { countingCtx } from './goals.fixture.ts';

// The worker in this process follows the same short schedule the local stack uses in tests (test/setup/global.ts).
Object.assign(process.env, { WEBHOOK_ALLOW_LOCAL_HTTP: 'true', WEBHOOK_RETRY_SCHEDULE: '1,2', WEBHOOK_TIMEOUT_MS: '4000' });

type Verify = (secret: string, headers: Record<string, unknown>, body: string, toleranceSeconds?: number) => boolean;

/** The signature check exactly as docs/webhooks.md prints it, loaded as a module. */
async function docsVerifier(): Promise<Verify> {
  const doc = readFileSync(resolve(import.meta.dirname, '../../docs/webhooks.md'), 'utf8');
  const block = /<!-- verify-snippet:start -->\n```js\n([\s\S]*?)```\n<!-- verify-snippet:end -->/.exec(doc);
  if (!block) throw new Error('verify snippet not found in docs/webhooks.md');
  expect(block[1]!.trimEnd().split('\n').length).toBeLessThanOrEqual(16);
  expect(block[1]).not.toMatch(/from '(?!node:crypto)/); // node:crypto only
  const dir = mkdtempSync(join(tmpdir(), 'verify-'));
  writeFileSync(join(dir, 'verify.mjs'), block[1]!);
  try {
    return ((await import(pathToFileURL(join(dir, 'verify.mjs')).href)) as { verifyWebhook: Verify }).verifyWebhook;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The delivery path on the real table: deliveries fanned out here (as the events projection does), attempted
 * by the webhook worker behind in-process queues with SQS semantics, against receivers on 127.0.0.1.
 * `redeliver` goes through the API, so the local stack's own worker sends that one.
 */
describe('webhook deliveries', () => {
  let t: TenantFixture;
  let ctx: DataCtx;
  /** Messages the worker has handled (each batch's, once it ends). */
  const handled = new Set<string>();
  const queues = deliveryWorkerQueues((ids) => ids.forEach((id) => handled.add(id)));
  beforeAll(async () => {
    t = await newTenant();
    ctx = { tenantId: t.tenantUuid, db: baseDb() };
    queues.start();
  });
  afterAll(() => queues.stop());

  const event = (type = 'goal.created'): IdentifiedEvent => ({
    id: `evt_${crypto.randomUUID().replace(/-/g, '')}`,
    event: {
      type: type as 'goal.created',
      timestamp: new Date().toISOString(),
      data: { tenant_uuid: t.tenantUuid, record: { uuid: crypto.randomUUID(), title: 'Ship it' } },
    },
  });
  const register = async (url: string, events = ['*']) => {
    const res = await t.admin.post('/webhooks', { url, events });
    expect(res.status).toBe(201);
    return res.body.data.record as { uuid: string; secret: string };
  };
  const deliveries = (w: { uuid: string }) => listAll(t.admin, `/webhooks/${w.uuid}/deliveries`);
  /** Until this process's delivery queue holds no message (none waiting, in flight or scheduled for a retry): nothing more will be sent. */
  const drained = () =>
    eventually(() => (queues.pending(WEBHOOK_DELIVERY_QUEUE) === 0 ? true : undefined), 30_000, 'the delivery queue drained');

  it('signs each delivery so that the docs snippet verifies it, and logs it succeeded', async () => {
    const verify = await docsVerifier();
    const receiver = await startReceiver();
    try {
      const w = await register(receiver.url);
      const e = event();
      expect(await fanOut(ctx, [e], queues)).toBe(1);
      const got = await eventually(() => receiver.received[0], 15_000, 'a delivery');
      expect(got.headers['webhook-id']).toBe(e.id);
      expect(JSON.parse(got.body)).toEqual(e.event);
      expect(got.headers['content-type']).toBe('application/json');
      expect(verify(w.secret, got.headers, got.body)).toBe(true);
      expect(verify(w.secret, got.headers, got.body.replace('Ship it', 'Ship it!'))).toBe(false);
      expect(verify(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, got.headers, got.body)).toBe(false);
      expect(
        verify(w.secret, { ...got.headers, 'webhook-timestamp': String(Number(got.headers['webhook-timestamp']) - 3600) }, got.body),
      ).toBe(false);
      const [d] = await eventually(async () => {
        const list = await deliveries(w);
        return list[0]?.status === 'succeeded' ? list : undefined;
      });
      expect(Object.keys(d).sort()).toEqual([
        'attempts',
        'created_at',
        'delivered_at',
        'event_id',
        'event_type',
        'last_error',
        'last_status_code',
        'next_attempt_at',
        'status',
        'uuid',
      ]);
      expect(d).toMatchObject({
        event_id: e.id,
        event_type: 'goal.created',
        status: 'succeeded',
        attempts: 1,
        last_status_code: 200,
        last_error: null,
        next_attempt_at: null,
      });
      // The delivery log keeps 30 days; the table's TTL removes older deliveries.
      const item = (
        await baseDb().send(
          new GetCommand({
            TableName: process.env.TABLE_NAME!,
            Key: keys.entity(t.tenantUuid, 'webhook_delivery', d.uuid),
            ConsistentRead: true,
          }),
        )
      ).Item!;
      expect(item.expires_at).toBe(Math.floor(Date.parse(d.created_at) / 1000) + DELIVERY_LOG_DAYS * 86_400);
      // The same event fanned out again (a replayed stream record) finds its delivery: no second POST.
      expect(await fanOut(ctx, [e], queues)).toBe(0);
      await drained();
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.stop();
    }
  });

  it('a receiver answering 500 twice then 200 gets the same webhook-id three times; the log shows it', async () => {
    const receiver = await startReceiver((_r, n) => (n <= 2 ? 500 : 200));
    try {
      const w = await register(receiver.url);
      const e = event('checkin.created');
      await fanOut(ctx, [e], queues);
      await eventually(() => (receiver.received.length >= 3 ? true : undefined), 20_000, 'three attempts');
      expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([e.id, e.id, e.id]);
      expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
      // Growing back-off: 1 s, then 2 s (the test schedule).
      const gaps = [receiver.received[1]!.at - receiver.received[0]!.at, receiver.received[2]!.at - receiver.received[1]!.at];
      expect(gaps[0]).toBeGreaterThanOrEqual(900);
      expect(gaps[1]).toBeGreaterThanOrEqual(1900);
      const d = await eventually(async () => (await deliveries(w)).find((x) => x.status === 'succeeded'));
      expect(d).toMatchObject({ event_id: e.id, attempts: 3, last_status_code: 200, last_error: null });
      await drained();
      expect(receiver.received).toHaveLength(3);
    } finally {
      await receiver.stop();
    }
  });

  it('a receiver that never answers ends failed after the schedule; redeliver (202) sends it again', async () => {
    let answer: 'hang' | 200 = 'hang';
    const receiver = await startReceiver(() => answer);
    try {
      const w = await register(receiver.url);
      const e = event('goal.updated');
      await fanOut(ctx, [e], queues);
      const failed = await eventually(async () => (await deliveries(w)).find((x) => x.status === 'failed'), 30_000, 'failed');
      expect(failed).toMatchObject({ event_id: e.id, attempts: 3, last_status_code: null, next_attempt_at: null, delivered_at: null });
      expect(failed.last_error).toMatch(/no answer within 4000 ms/);
      expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([e.id, e.id, e.id]);

      answer = 200;
      const res = await t.admin.post(`/webhooks/${w.uuid}/deliveries/${failed.uuid}/redeliver`);
      expect(res.status).toBe(202);
      expect(res.body.data).toMatchObject({ type: 'webhook_delivery', record: { uuid: failed.uuid, status: 'pending' } });
      const done = await eventually(async () => (await deliveries(w)).find((x) => x.status === 'succeeded'), 20_000, 'redelivered');
      expect(done).toMatchObject({ uuid: failed.uuid, event_id: e.id, attempts: 4, last_status_code: 200 });
      expect(receiver.received).toHaveLength(4);
      expect(receiver.received[3]!.headers['webhook-id']).toBe(e.id);
      expect(receiver.received[3]!.body).toBe(receiver.received[0]!.body);
    } finally {
      await receiver.stop();
    }
  });

  it('a redelivery whose message the worker takes before the redeliver’s write lands (a slow write under load) is still sent, once', async () => {
    let answer = 500;
    const receiver = await startReceiver(() => answer);
    try {
      const w = await register(receiver.url);
      const e = event('goal.updated');
      await fanOut(ctx, [e], queues);
      const failed = await eventually(async () => (await deliveries(w)).find((x) => x.status === 'failed'), 30_000, 'failed');
      answer = 200;
      // redeliver queues its message before its write (shared/domain/webhooks/deliveries.ts): here the write is
      // held until the worker has handled the message, as a write stuck behind a busy table is
      const held: QueueSender = {
        send: async (queue, body, opts) => {
          const id = await queues.send(queue, body, opts);
          await eventually(() => (handled.has(id) ? true : undefined), 15_000, 'the worker handled the message');
          return id;
        },
      };
      const { ctx: admin } = await countingCtx(t, t.adminUuid);
      expect(await redeliver(admin, w.uuid, failed.uuid, held)).toMatchObject({ uuid: failed.uuid, status: 'pending' });
      const done = await eventually(async () => (await deliveries(w)).find((x) => x.status === 'succeeded'), 20_000, 'redelivered');
      expect(done).toMatchObject({ uuid: failed.uuid, event_id: e.id, attempts: 4, last_status_code: 200 });
      await drained();
      expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([e.id, e.id, e.id, e.id]);
    } finally {
      await receiver.stop();
    }
  });

  it('sends only subscribed types to active endpoints; redeliver of an unknown delivery is 404', async () => {
    const receiver = await startReceiver();
    try {
      const w = await register(receiver.url, ['checkin.deleted']);
      const off = await register(receiver.url);
      await t.admin.put(`/webhooks/${off.uuid}`, { status: 'disabled' });
      await fanOut(ctx, [event('goal.created'), event('checkin.deleted')], queues);
      await eventually(() => receiver.received[0], 15_000, 'a delivery');
      await drained();
      expect(receiver.events().map((x) => x.event.type)).toEqual(['checkin.deleted']);
      expect(await deliveries(off)).toEqual([]);
      expectError(await t.admin.post(`/webhooks/${w.uuid}/deliveries/${crypto.randomUUID()}/redeliver`), 404, 'not_found');
      const d = (await deliveries(w))[0];
      expectError(await t.admin.post(`/webhooks/${off.uuid}/deliveries/${d.uuid}/redeliver`), 404, 'not_found'); // a delivery of another endpoint
    } finally {
      await receiver.stop();
    }
  });

  it('an endpoint that has only failed for the disabling window is disabled and every admin is notified in-app', async () => {
    process.env.WEBHOOK_DISABLE_AFTER_SECONDS = '2';
    const receiver = await startReceiver(() => 503);
    try {
      const [admin2, member] = await Promise.all([t.user({ role: 'admin' }), t.user({ role: 'member' })]);
      const w = await register(receiver.url);
      await fanOut(ctx, [event('goal.deleted')], queues);
      const disabled = await eventually(
        async () => {
          const r = (await t.admin.get(`/webhooks/${w.uuid}`)).body.data.record;
          return r.status === 'disabled' ? r : undefined;
        },
        30_000,
        'disabled',
      );
      expect(disabled.status).toBe('disabled');
      for (const api of [t.admin, admin2.api]) {
        const notes = (await listAll(api, '/notifications')).filter((n) => n.kind === 'webhook.disabled' && n.subject_uuid === w.uuid);
        expect(notes).toHaveLength(1);
        expect(notes[0]).toMatchObject({ subject_type: 'webhook', actor_uuid: null, shareable_uuid: null });
        expect(notes[0].message).toContain(receiver.url);
      }
      expect((await listAll(member.api, '/notifications')).filter((n) => n.kind === 'webhook.disabled')).toEqual([]);
      // Disabled: new events make no deliveries, redeliver is refused until an admin turns it back on.
      const before = (await deliveries(w)).length;
      await fanOut(ctx, [event('goal.created')], queues);
      expect(await deliveries(w)).toHaveLength(before);
      const d = (await deliveries(w))[0];
      expectError(await t.admin.post(`/webhooks/${w.uuid}/deliveries/${d.uuid}/redeliver`), 422, 'validation_failed');
      expect((await t.admin.put(`/webhooks/${w.uuid}`, { status: 'active' })).body.data.record.status).toBe('active');
    } finally {
      delete process.env.WEBHOOK_DISABLE_AFTER_SECONDS;
      await receiver.stop();
    }
  });

  it('duplicate queue messages of one attempt (a replayed change, SQS duplicates) make one POST', async () => {
    const receiver = await startReceiver(() => new Promise((r) => setTimeout(() => r(200), 500))); // slow: the duplicates overlap
    try {
      const w = await register(receiver.url);
      const e = event('checkin.updated');
      await fanOut(ctx, [e], queues);
      const [d] = await deliveries(w);
      const msg = { version: 1, tenant_uuid: t.tenantUuid, webhook_uuid: w.uuid, delivery_uuid: d.uuid, seq: 0, not_before: 0 };
      await Promise.all(Array.from({ length: 6 }, () => queues.send(WEBHOOK_DELIVERY_QUEUE, msg)));
      await eventually(async () => ((await deliveries(w))[0]?.status === 'succeeded' ? true : undefined), 20_000, 'succeeded');
      await drained();
      expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([e.id]);
      expect((await deliveries(w))[0]).toMatchObject({ attempts: 1, status: 'succeeded' });
    } finally {
      await receiver.stop();
    }
  });

  it('a burst reaches each endpoint at most WEBHOOK_DELIVERY_CONCURRENCY requests at once, and a slow endpoint beside it holds up none of the fast one', async () => {
    const N = 40;
    /** Requests each receiver holds open at once, and the most it held. */
    const open = { fast: 0, slow: 0 };
    const most = { fast: 0, slow: 0 };
    const answerAfter = (which: 'fast' | 'slow', ms: number) => () => {
      most[which] = Math.max(most[which], ++open[which]);
      return new Promise<number>((r) =>
        setTimeout(() => {
          open[which]--;
          r(200);
        }, ms),
      );
    };
    const fast = await startReceiver(answerAfter('fast', 50));
    const slow = await startReceiver(answerAfter('slow', 3000)); // slow, within the 4 s timeout: each attempt succeeds
    try {
      const wf = await register(fast.url);
      const ws = await register(slow.url);
      const events = Array.from({ length: N }, () => event('checkin.created'));
      // the burst's messages all visible at once (a backlog), so the worker takes full batches of both endpoints' records
      const burst: unknown[] = [];
      await fanOut(ctx, events, { send: async (_q, body) => (burst.push(body), 'collected') } satisfies QueueSender);
      await Promise.all(burst.map((body) => queues.send(WEBHOOK_DELIVERY_QUEUE, body, { delaySeconds: 1 })));
      await eventually(() => (fast.received.length === N ? true : undefined), 60_000, `${N} deliveries to the fast endpoint`);
      // the fast endpoint was served while the slow one waited: each batch put the slow one's records back after one attempt
      const slowWhenFastDone = slow.received.length;
      // the slow one's records come back a batch's worth of attempts at a time (one each), so it drains slowly, each once
      await eventually(() => (slow.received.length === N ? true : undefined), 150_000, `${N} deliveries to the slow endpoint`);
      await drained();
      for (const [r, w] of [
        [fast, wf],
        [slow, ws],
      ] as const) {
        expect(new Set(r.received.map((x) => x.headers['webhook-id']))).toEqual(new Set(events.map((e) => e.id)));
        expect(r.received).toHaveLength(N); // each once
        expect((await deliveries(w)).map((d) => d.status)).toEqual(Array(N).fill('succeeded'));
      }
      expect(most.fast).toBeLessThanOrEqual(WEBHOOK_DELIVERY_CONCURRENCY);
      expect(most.slow).toBeLessThanOrEqual(WEBHOOK_DELIVERY_CONCURRENCY);
      expect(most.fast).toBeGreaterThan(1); // lanes of different batches run at once
      expect(slowWhenFastDone).toBeLessThan(2 * WEBHOOK_DELIVERY_CONCURRENCY);
    } finally {
      await fast.stop();
      await slow.stop();
    }
  });
});
