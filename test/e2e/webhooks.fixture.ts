import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { WEBHOOK_DELIVERY_CONCURRENCY, WEBHOOK_DELIVERY_QUEUE } from '#shared/domain/webhooks/entity.ts';
import { LocalQueues } from '#shared/queue/queue.ts';
import { webhookDeliverHandler } from '#functions/workers/webhook-deliver.ts';
import { type Api, listAll } from '../support/api.ts';
import { EVENTUALLY_MAX_MS } from '../support/eventually.ts';
import { afterStreamPasses } from '../support/stream-marker.ts';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A webhook receiver on 127.0.0.1: records every request and answers with what `respond` says (default
 * 200). `respond` returning 'hang' never answers (the sender's timeout must end the attempt).
 */
export async function startReceiver(respond: (r: Received, n: number) => number | 'hang' | Promise<number> = () => 200) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const r = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(r);
      const status = await respond(r, received.filter((x) => x.headers['webhook-id'] === r.headers['webhook-id']).length);
      if (status === 'hang') return; // the socket stays open until the sender gives up
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status >= 300 ? `nope ${status}` : 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    events: () => received.map((r) => ({ id: r.headers['webhook-id'] as string, event: JSON.parse(r.body) })),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls until `check` returns a value (not undefined) or the time is up (at most 60 s, as test/support/eventually.ts). */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = EVENTUALLY_MAX_MS,
  what = 'condition',
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Resolves once everything committed before the call has gone as far toward the endpoint as it will: the stream
 * applied it (every delivery it fans out is made and queued), then no delivery of the endpoint is pending (each
 * sent or given up). What a check that something was NOT sent waits for: the delivery worker sends a batch's
 * messages at once, so a later event arriving proves nothing of the earlier ones in its batch.
 */
export async function deliveriesSettled(api: Api, webhookUuid: string): Promise<void> {
  await afterStreamPasses();
  await eventually(
    async () =>
      (await listAll(api, `/webhooks/${webhookUuid}/deliveries`)).every((d: { status: string }) => d.status !== 'pending')
        ? true
        : undefined,
    EVENTUALLY_MAX_MS,
    `no pending delivery of webhook ${webhookUuid}`,
  );
}

/**
 * In-process queues that run the real delivery worker on a test's own deliveries (start and stop them around the
 * tests). `handled`: the ids of the messages the worker has handled, as each batch ends.
 */
export function deliveryWorkerQueues(handled?: (messageIds: string[]) => void): LocalQueues {
  const queues = new LocalQueues({ pollMs: 50, baseBackoffMs: 100 });
  const worker = webhookDeliverHandler(() => ({ queue: queues }));
  queues.register({
    queue: WEBHOOK_DELIVERY_QUEUE,
    maxReceiveCount: 5,
    batchSize: 10,
    timeoutSeconds: 30,
    maxConcurrency: WEBHOOK_DELIVERY_CONCURRENCY,
    handler: async () => async (event) => {
      const res = await worker(event);
      handled?.(event.Records.map((r) => r.messageId));
      return res;
    },
  });
  return queues;
}
