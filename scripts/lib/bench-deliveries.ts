import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { baseDb } from '#shared/db/client.ts';
import { config } from '#shared/config.ts';
import { fanOut } from '#shared/domain/webhooks/deliveries.ts';
import { WEBHOOK_DELIVERY_QUEUE } from '#shared/domain/webhooks/entity.ts';
import type { IdentifiedEvent } from '#shared/domain/webhooks/events.ts';
import { queueSender } from '#shared/queue/queue.ts';
import { DELIVERIES_PER_EVENT, type Row } from './bench-budgets.ts';
import { call, must } from './bench-http.ts';

/** Events of the burst; each goes to both endpoints. */
const EVENTS = 300;
const ENDPOINTS = 2;
/** The chaos run's clients, writing check-ins for this long. */
const LOAD_CLIENTS = 16;
const LOAD_SECONDS = 15;

/**
 * How many webhook deliveries a second the local stack sustains against the events a second the chaos load
 * produces, both measured here and now, so the ratio holds on a fast machine and a loaded one alike (issue 37).
 * First the load: LOAD_CLIENTS clients post check-ins on the leaves of a three-level rollup tree for LOAD_SECONDS (as
 * the chaos run's clients write most), every event going to one endpoint; the events it produced, once the stream
 * and the queue are idle, per second from its start to its last event received. Then the deliveries: a backlog of EVENTS events to each of
 * ENDPOINTS more endpoints (as the chaos run's two tenants each have one), fanned out as the events projection does,
 * all visible on the delivery queue at once, taken by the stack's own worker (its row's concurrency, lanes per
 * endpoint) and POSTed to receivers on 127.0.0.1 answering at once; the rate from the messages becoming visible to
 * the last delivery received. It must be at least DELIVERIES_PER_EVENT (3) times the load's events a second.
 */
export async function deliveryRow(url: string, admin: string, leaves: string[], settled: () => Promise<void>): Promise<Row> {
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
    // the load: its events reach the endpoint `load`
    await must(url, admin, 'POST', '/webhooks', { url: `http://127.0.0.1:${port}/load`, events: ['*'] });
    const loadFrom = Date.now();
    const loadEnds = loadFrom + LOAD_SECONDS * 1000;
    await Promise.all(
      Array.from({ length: LOAD_CLIENTS }, async (_, c) => {
        for (let i = 0; Date.now() < loadEnds; i++)
          await call(url, admin, 'POST', '/rest/v2/checkins', { goal_uuid: leaves[(c + i) % leaves.length], value: (c * 7 + i) % 100 });
      }),
    );
    const loadEvents = await quiet(() => [...received.keys()].filter((k) => k.startsWith('/load ')).length, settled);
    // per second from the load's start to its last event received: the stack produces events no faster than its stream applies the writes
    const loadLast = Math.max(...[...received].filter(([k]) => k.startsWith('/load ')).map(([, at]) => at));
    const eventsPerSecond = loadEvents / ((loadLast - loadFrom) / 1000);
    const deliveriesPerSecond = DELIVERIES_PER_EVENT * eventsPerSecond;
    for (let i = 0; i < ENDPOINTS; i++)
      await must(url, admin, 'POST', '/webhooks', { url: `http://127.0.0.1:${port}/bench/${i}`, events: ['*'] });
    received.clear();
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
    const want = EVENTS * (ENDPOINTS + 1); // the load's endpoint too
    const extra: string[] = messages.length === want ? [] : [`${messages.length} deliveries fanned out, not ${want}`];
    if (loadEvents === 0) extra.push('the load produced no event');
    const visibleAt = Date.now() + 1000;
    await Promise.all(messages.map((m) => queueSender().send(WEBHOOK_DELIVERY_QUEUE, m, { delaySeconds: 1 })));
    const deadline = Date.now() + 120_000;
    while (received.size < messages.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (received.size < messages.length) extra.push(`${received.size} of ${messages.length} received within 120 s`);
    const seconds = (Math.max(...received.values()) - visibleAt) / 1000;
    const rate = received.size / seconds;
    if (rate < deliveriesPerSecond) extra.push(`${rate.toFixed(0)}/s < ${deliveriesPerSecond.toFixed(0)}/s`);
    const budget = `>= ${DELIVERIES_PER_EVENT}x the load's events/s (${eventsPerSecond.toFixed(1)}: ${deliveriesPerSecond.toFixed(0)}/s)`;
    return {
      scenario: `webhook deliveries: ${rate.toFixed(0)}/s (${want} to ${ENDPOINTS + 1} endpoints, a backlog), ${(rate / eventsPerSecond).toFixed(1)}x the load's ${eventsPerSecond.toFixed(1)} events/s`,
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

/** `count()` once the stream is idle and it has not moved for 3 s (the last deliveries of the load received). */
async function quiet(count: () => number, settled: () => Promise<void>): Promise<number> {
  for (let last = -1; ; ) {
    await settled();
    await new Promise((r) => setTimeout(r, 3000));
    const now = count();
    if (now === last) return now;
    last = now;
  }
}
