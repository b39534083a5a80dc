import { sqsRecord } from '#shared/queue/queue.ts';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '#functions/workers/support-issue.ts';
import { credentialPaths } from '#shared/domain/integrations/decide.ts';
import { dataSourceUuidOf } from '#shared/domain/integrations/data-sources.ts';
import { collapseWhitespace, connectorRequestUuid, normalizeConnectionType } from '#shared/domain/integrations/entity.ts';
import { supportIssueKey, type SupportIssueMessage } from '#shared/domain/integrations/support.ts';
import { NotFoundError } from '#shared/errors.ts';
import { integrationWorkers } from '#shared/routes/integrations.ts';

const TENANT = '11111111-1111-4111-8111-111111111111';
const OTHER = '33333333-3333-4333-8333-333333333333';
const ID = '22222222-2222-4222-8222-222222222222';

describe('connector names', () => {
  it('normalizes case and whitespace runs, keeping the display form', () => {
    expect(collapseWhitespace('  Sales \t\n Force  ')).toBe('Sales Force');
    expect(normalizeConnectionType('  Sales \t\n Force  ')).toBe('sales force');
    expect(normalizeConnectionType('Cafe\u0301')).toBe(normalizeConnectionType('CAFÉ'));
    expect(normalizeConnectionType('sales force')).not.toBe(normalizeConnectionType('salesforce'));
  });

  it('derives one stable v5 uuid per tenant and normalized name', () => {
    const a = connectorRequestUuid(TENANT, 'sales force');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(connectorRequestUuid(TENANT, 'sales force')).toBe(a);
    expect(connectorRequestUuid(TENANT, 'salesforce')).not.toBe(a);
    expect(connectorRequestUuid(OTHER, 'sales force')).not.toBe(a);
  });
});

describe('data source ids and config', () => {
  it('reads the uuid from either id form; another tenant or any other shape is 404', () => {
    expect(dataSourceUuidOf(TENANT, ID)).toBe(ID);
    expect(dataSourceUuidOf(TENANT, `${TENANT}_${ID}`)).toBe(ID);
    expect(dataSourceUuidOf(TENANT, `${TENANT.toUpperCase()}_${ID.toUpperCase()}`)).toBe(ID);
    for (const bad of [`${OTHER}_${ID}`, `_${ID}`, 'nope', `${TENANT}_nope`, `${ID}_`, `${TENANT}_${TENANT}_${ID}`]) {
      expect(() => dataSourceUuidOf(TENANT, bad), bad).toThrow(NotFoundError);
    }
  });

  it('finds credential-looking keys at any depth', () => {
    expect(credentialPaths({ report: 'r', nested: { list: [{ clientSecret: 'x' }], 'API-Key': 'k' }, Authorization: 'b' }).sort()).toEqual([
      'config.Authorization',
      'config.nested.API-Key',
      'config.nested.list.0.clientSecret',
    ]);
    expect(credentialPaths({ report_id: 'R', fields: ['token'], url: 'https://x' })).toEqual([]);
  });
});

// ---------- the support-issue worker, over a real HTTP server ----------

interface Received {
  method?: string;
  headers: IncomingHttpHeaders;
  body: any;
}

const message = (over: Partial<SupportIssueMessage> = {}): SupportIssueMessage => ({
  version: 1,
  idempotency_key: supportIssueKey(TENANT, ID, 'user-1'),
  tenant: { uuid: TENANT, name: 'Acme' },
  requester: { uuid: 'user-1', display_name: 'Ada', email: 'ada@example.test' },
  connector_request: {
    uuid: ID,
    connection_type: 'Sales Force',
    normalized_key: 'sales force',
    connector_display_name: 'Salesforce',
    request_source: 'catalog',
    request_count: 3,
  },
  requested_at: '2025-01-02T03:04:05.000Z',
  ...over,
});

const sqsEvent = (bodies: unknown[]): SQSEvent => ({
  Records: bodies.map((body, i) => sqsRecord({ queue: 'support-issues', messageId: `m${i}`, body })),
});

describe('support-issue worker', () => {
  let server: Server;
  let url: string;
  const received: Received[] = [];
  /** What the fake support tool answers next: a status, or 'hang' to never answer. */
  let answer: (body: any) => number | 'hang' = () => 201;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        received.push({ method: req.method, headers: req.headers, body });
        const status = answer(body);
        if (status === 'hang') return;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end('{"id":"ISSUE-1"}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/issues?token=abc`;
  });

  afterEach(() => {
    received.length = 0;
    answer = () => 201;
    delete process.env.SUPPORT_WEBHOOK_URL;
    delete process.env.SUPPORT_WEBHOOK_TIMEOUT_MS;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('is declared as a table-less, mail-less worker with a dead-letter limit, the only one told the webhook URL', () => {
    expect(integrationWorkers.filter((w) => w.queue === 'support-issues' || w.needs?.includes('support:webhook'))).toEqual([
      {
        queue: 'support-issues',
        handler: 'functions/workers/support-issue.ts',
        maxReceiveCount: 5,
        batchSize: 10,
        timeoutSeconds: 30,
        table: 'none',
        needs: ['support:webhook'],
        maxConcurrency: 2,
      },
    ]);
  });

  it('POSTs the issue as JSON, attributed to the requester, with an idempotency key', async () => {
    process.env.SUPPORT_WEBHOOK_URL = url;
    const res = await handler(sqsEvent([message()]));
    expect(res).toEqual({ batchItemFailures: [] });
    expect(received).toHaveLength(1);
    const [call] = received;
    expect(call!.method).toBe('POST');
    expect(call!.headers['content-type']).toBe('application/json');
    expect(call!.headers['idempotency-key']).toBe(`connector-request:${TENANT}:${ID}:user-1`);
    expect(call!.body).toEqual({
      type: 'connector_request',
      idempotency_key: `connector-request:${TENANT}:${ID}:user-1`,
      title: 'Connector request: Salesforce',
      description: expect.stringContaining(
        'Ada <ada@example.test> requested the connector "Salesforce" (Sales Force) from the connector catalog in workspace Acme',
      ),
      reporter: { uuid: 'user-1', display_name: 'Ada', email: 'ada@example.test' },
      workspace: { uuid: TENANT, name: 'Acme' },
      connector_request: message().connector_request,
      requested_at: '2025-01-02T03:04:05.000Z',
    });
  });

  it('reports only the failed messages of a batch: a 500, a malformed message', async () => {
    process.env.SUPPORT_WEBHOOK_URL = url;
    answer = (body) => (body.reporter.uuid === 'user-2' ? 500 : 202);
    const second = message({ requester: { uuid: 'user-2', display_name: 'Bo', email: 'bo@example.test' }, idempotency_key: 'k2' });
    const res = await handler(sqsEvent([message(), second, '{"version":1}', 'not json']));
    expect(res!.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['m1', 'm2', 'm3']);
    expect(received.map((r) => r.body.reporter.uuid).sort()).toEqual(['user-1', 'user-2']);
  });

  it('gives up on a hanging support tool after the timeout (the queue retries)', async () => {
    process.env.SUPPORT_WEBHOOK_URL = url;
    process.env.SUPPORT_WEBHOOK_TIMEOUT_MS = '200';
    answer = () => 'hang';
    const started = Date.now();
    const res = await handler(sqsEvent([message()]));
    expect(res).toEqual({ batchItemFailures: [{ itemIdentifier: 'm0' }] });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('acknowledges messages without any call when no support tool is configured', async () => {
    const res = await handler(sqsEvent([message(), message({ idempotency_key: 'k2' })]));
    expect(res).toEqual({ batchItemFailures: [] });
    expect(received).toHaveLength(0);
  });

  it('fails (for the dead-letter queue) on a malformed URL without a call', async () => {
    process.env.SUPPORT_WEBHOOK_URL = 'not a url';
    expect(await handler(sqsEvent([message()]))).toEqual({ batchItemFailures: [{ itemIdentifier: 'm0' }] });
    process.env.SUPPORT_WEBHOOK_URL = 'ftp://example.test/x';
    expect(await handler(sqsEvent([message()]))).toEqual({ batchItemFailures: [{ itemIdentifier: 'm0' }] });
    expect(received).toHaveLength(0);
  });
});
