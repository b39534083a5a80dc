import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runAdmin } from '../../scripts/lib/admin-commands.ts';
import { startLocalStack, type LocalStack } from '../../scripts/lib/local-stack.ts';
import { layerClients } from '#shared/db/client.ts';
import { Api, expectError, listAll } from '../support/api.ts';
import { withinListLag } from '../support/list-lag.ts';
import { type Attempt, keysOf, type ScriptedFault, scriptedFaults } from '../support/store-faults.ts';

/**
 * Contract section 11, "a first attempt that ended in 5xx does not keep the key", at every door that honours
 * Idempotency-Key (REST POST, the push door, MCP's idempotency_key), over HTTP with exact DynamoDB faults: a stack
 * of this file's own on the run's DynamoDB Local, every client its handlers build carrying the faults the test
 * arms (test/support/store-faults.ts). The first attempt's write applies and is answered 500 on every SDK attempt,
 * then removing its lock fails on every SDK attempt: the request answers 5xx, and the resend with the same key
 * is not refused (409) but runs again, finds that write by its seeded ids and answers it; nothing is written twice.
 */
describe('Idempotency-Key after store faults, at every door (contract 11 and 19)', () => {
  let stack: LocalStack;
  let dataDir: string;
  /** The faults armed: each rule answers an attempt, the first that names one wins. */
  const armed: Array<(a: Attempt) => ScriptedFault> = [];
  const injected = new Map<string, number>();

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'goal-tracking-idem-faults-'));
    // this stack issues the tokens (its own key, in its data dir), so it is their issuer: the MCP door asks it for the keys
    delete process.env.ISSUER_URL;
    stack = await startLocalStack({
      port: 0,
      dataDir,
      inMemory: true,
      quiet: true,
      tableName: `idem-faults-${randomUUID().slice(0, 8)}`,
      dynamo: { endpoint: inject('dynamoEndpoint'), stop: async () => {} }, // the run's DynamoDB Local, left running
    });
    // after the stack set its own (none): every client built from here on, the handlers' included
    layerClients((client) => {
      const rule = (a: Attempt) => armed.map((r) => r(a)).find((f) => f !== undefined);
      scriptedFaults(client, rule, injected);
    });
  });

  afterAll(async () => {
    layerClients(undefined);
    await stack?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function newTenant() {
    const out = (await runAdmin([
      'create-tenant',
      '--name',
      'Faults',
      '--admin-email',
      `admin-${randomUUID().slice(0, 8)}@example.test`,
    ])) as {
      tenant_uuid: string;
      token: string;
    };
    return { tenant: out.tenant_uuid, admin: new Api(out.token, stack.url) };
  }

  /** `n` attempts of the next call `picks` fail, the first after it applied when `first` is `applied`. */
  function arm(picks: (a: Attempt) => boolean, n: number, first: ScriptedFault = 'internal') {
    let left = n;
    const rule = (a: Attempt): ScriptedFault => (left > 0 && picks(a) ? (left-- === n ? first : 'internal') : undefined);
    armed.push(rule);
    return { spent: () => left === 0 };
  }
  const isRecord = (a: Attempt) => keysOf(a).some((pk) => pk.includes('#idem#'));
  /** The request's own write: the transaction that creates the tenant's `type` record (not a worker's, running beside it). */
  const creates = (tenant: string, type: string) => (a: Attempt) =>
    a.call === 'TransactWriteItems' &&
    (a.input.TransactItems as Array<{ Put?: { Item: { PK: { S: string } } } }>).some((t) =>
      t.Put?.Item.PK.S.startsWith(`T#${tenant}#${type}#`),
    );

  /** The write applies and is answered 500 on all five SDK attempts; removing the lock then fails all five. */
  function armAppliedWriteAndStuckLock(tenant: string, type: string) {
    injected.clear();
    armed.length = 0;
    const write = arm(creates(tenant, type), 5, 'applied');
    const unlock = arm((a) => a.call === 'DeleteItem' && isRecord(a), 5);
    return () => {
      expect(write.spent()).toBe(true);
      expect(unlock.spent()).toBe(true);
      expect(injected.get('TransactWriteItems')).toBe(5);
      expect(injected.get('DeleteItem')).toBe(5);
      armed.length = 0;
    };
  }

  it('REST POST: the 500 first attempt leaves the key free; the resend answers the label it wrote, once', async () => {
    const { tenant, admin } = await newTenant();
    const key = randomUUID();
    const sent = () => admin.request('POST', '/rest/v2/labels', { name: 'Once' }, { 'idempotency-key': key });
    const spent = armAppliedWriteAndStuckLock(tenant, 'label');
    expectError(await sent(), 500, 'internal');
    spent();
    const retry = await sent();
    expect(retry.status, JSON.stringify(retry.body)).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    const replay = await sent();
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(retry.body);
    await withinListLag(async () =>
      expect((await listAll(admin, '/rest/v2/labels')).map((l: { uuid: string }) => l.uuid)).toEqual([retry.body.data.record.uuid]),
    );
  });

  /** A key result with a push data source, and how to list its check-ins. */
  async function keyResult(admin: Api) {
    const period = (await admin.post('/rest/v2/time_periods', { name: 'Q', start_date: '2026-01-01', end_date: '2026-12-31' })).body.data
      .record.uuid;
    const kr = (
      await admin.post('/rest/v2/key_results', { title: 'KR', time_period_uuid: period, metric: { start_value: 0, target_value: 100 } })
    ).body.data.record;
    const checkins = async () =>
      (await listAll(admin, `/rest/v2/checkins?q[goal_uuid_eq]=${kr.uuid}`)).map((c: { uuid: string }) => c.uuid);
    return { kr: kr.uuid as string, checkins };
  }

  it('the push door: the 500 first push leaves the key free; the resend answers the check-in it wrote, once', async () => {
    const { tenant, admin } = await newTenant();
    const { kr, checkins } = await keyResult(admin);
    const source = (await admin.post('/data_sources', { goal_uuid: kr, name: 'Pushed', kind: 'push' })).body.data.record;
    const push = new Api(source.push_secret, stack.url);
    const key = randomUUID();
    const sent = () => push.request('POST', `/data_sources/${source.uuid}/values`, { value: 40 }, { 'idempotency-key': key });
    const spent = armAppliedWriteAndStuckLock(tenant, 'checkin');
    expectError(await sent(), 500, 'internal');
    spent();
    const retry = await sent();
    expect(retry.status, JSON.stringify(retry.body)).toBe(201);
    const replay = await sent();
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(retry.body);
    await withinListLag(async () => expect(await checkins()).toEqual([retry.body.data.record.uuid]));
  });

  it("MCP create_checkin's idempotency_key: the failed first call leaves the key free; the resend answers the check-in it wrote, once", async () => {
    const { tenant, admin } = await newTenant();
    const { kr, checkins } = await keyResult(admin);
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`), {
        requestInit: { headers: { connection: 'close', authorization: `Bearer ${admin.token}` } },
      }),
    );
    const key = randomUUID();
    const sent = async () =>
      (await client.callTool({
        name: 'create_checkin',
        arguments: { goal_uuid: kr, value: 40, idempotency_key: key },
      })) as CallToolResult & {
        structuredContent?: any;
      };
    const spent = armAppliedWriteAndStuckLock(tenant, 'checkin');
    const first = await sent();
    expect(first.isError).toBe(true);
    expect(JSON.parse((first.content[0] as { text: string }).text).error).toMatchObject({ status: 500, code: 'internal' });
    spent();
    const retry = await sent();
    expect(retry.isError ?? false, JSON.stringify(retry.content)).toBe(false);
    const again = await sent();
    expect(again.structuredContent.record.uuid).toBe(retry.structuredContent.record.uuid);
    await withinListLag(async () => expect(await checkins()).toEqual([retry.structuredContent.record.uuid]));
    await client.close();
  });
});
