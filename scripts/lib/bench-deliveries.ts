import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { baseDb } from '#shared/db/client.ts';
import { config } from '#shared/config.ts';
import { fanOut } from '#shared/domain/webhooks/deliveries.ts';
import { WEBHOOK_DELIVERY_QUEUE } from '#shared/domain/webhooks/entity.ts';
import type { IdentifiedEvent } from '#shared/domain/webhooks/events.ts';
import { queueSender } from '#shared/queue/queue.ts';
import { CHAOS_EVENTS_PER_SECOND, DELIVERIES_PER_SECOND, type Row } from './bench-budgets.ts';
import { must } from './bench-http.ts';

/** Events of the burst; each goes to both endpoints. */
const EVENTS = 300;
const ENDPOINTS = 2;

/**
 * How many webhook deliveries a second the local stack sustains (issue 37): a backlog of EVENTS events to each
 * of ENDPOINTS endpoints (as the chaos run's two tenants each have one), fanned out as the events projection does,
 * all visible on the delivery queue at once, then taken by the stack's own worker (its row's concurrency, lanes per
 * endpoint) and POSTed to receivers on 127.0.0.1 answering at once. The rate, from the messages becoming visible to
 * the last delivery received, must be at least DELIVERIES_PER_SECOND: three times the events a second the chaos
 * run's writes produce (CHAOS_EVENTS_PER_SECOND, which every chaos run checks it stays under).
 */
export async function deliveryRow(url: string, admin: string): Promise<Row> {
  const received = new Map<string, number>();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.set(`${req.url} ${req.headers['webhook-id']}`, Date.now());
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  try {
    const tenantId = JSON.parse(Buffer.from(admin.split('.')[1]!, 'base64url').toString('utf8'))[config.tenantClaim] as string;
    for (let i = 0; i < ENDPOINTS; i++)
      await must(url, admin, 'POST', '/webhooks', { url: `http://127.0.0.1:${port}/bench/${i}`, events: ['*'] });
    const events: IdentifiedEvent[] = Array.from({ length: EVENTS }, () => ({
      id: `evt_${randomUUID().replace(/-/g, '')}`,
      event: {
        type: 'checkin.created',
        timestamp: new Date().toISOString(),
        data: { tenant_uuid: tenantId, record: { uuid: randomUUID(), value: 1 } },
      },
    }));
    // the deliveries made (what the stream's events projection does), their messages held back: a backlog
    const messages: unknown[] = [];
    await fanOut({ tenantId, db: baseDb() }, events, { send: async (_q, body) => (messages.push(body), 'held') });
    const want = EVENTS * ENDPOINTS;
    const extra: string[] = messages.length === want ? [] : [`${messages.length} deliveries fanned out, not ${want}`];
    const visibleAt = Date.now() + 1000;
    await Promise.all(messages.map((m) => queueSender().send(WEBHOOK_DELIVERY_QUEUE, m, { delaySeconds: 1 })));
    const deadline = Date.now() + 120_000;
    while (received.size < messages.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (received.size < messages.length) extra.push(`${received.size} of ${messages.length} received within 120 s`);
    const seconds = (Math.max(...received.values()) - visibleAt) / 1000;
    const rate = received.size / seconds;
    if (rate < DELIVERIES_PER_SECOND) extra.push(`${rate.toFixed(0)}/s < ${DELIVERIES_PER_SECOND}/s`);
    const budget = `>= ${DELIVERIES_PER_SECOND}/s (3x the chaos run's ${CHAOS_EVENTS_PER_SECOND} events/s)`;
    return {
      scenario: `webhook deliveries: ${rate.toFixed(0)}/s (${want} to ${ENDPOINTS} endpoints, a backlog)`,
      status: extra.length ? 500 : 200,
      records: received.size,
      round_trips: 0,
      calls: 0,
      read_units: 0,
      write_units: 0,
      items_read: 0,
      writes: 0,
      limiter_round_trips: 0,
      limiter_calls: 0,
      limiter_read_units: 0,
      limiter_write_units: 0,
      limiter_writes: 0,
      ms: Math.round(seconds * 1000),
      budget,
      limiter_budget: 'none',
      over_target: '',
      verdict: extra.length ? `FAIL: ${extra.join('; ')}` : 'ok',
    };
  } finally {
    server.closeAllConnections();
    server.close();
  }
}
