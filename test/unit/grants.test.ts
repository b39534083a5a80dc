import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DeleteCommand, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { instrument } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { limiterKeys } from '#shared/db/rate-limit-store.ts';
import { LocalQueues } from '#shared/queue/queue.ts';
import type { Grant } from '#shared/function-grant.ts';
import { requireQueueSend, stringLike, tableActionsOf, withGrant } from '#shared/grants.ts';
import { routes } from '#shared/routes/index.ts';
import { tableAccessOf } from '#shared/routes/types.ts';

/**
 * The local stack runs each handler inside its row's grant (scripts/lib/local-stack.ts): what its row does
 * not declare fails as IAM would refuse it in AWS. No DynamoDB is needed: a refused call never leaves the
 * process, and an allowed one is let through to an endpoint that is not there (a connection error, not a refusal).
 */
const db = instrument(
  new DynamoDBClient({
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:9',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    maxAttempts: 1,
  }),
);
const tenant = '00000000-0000-4000-8000-000000000001';
const item = { ...keys.entity(tenant, 'goal', 'g1'), v: 1 };
const reader: Grant = { name: 'GET /rest/v2/objectives', table: 'read', sendsTo: [] };
const writer: Grant = { name: 'POST /rest/v2/objectives', table: 'write', sendsTo: ['notifications'] };
const denied = (p: Promise<unknown>) => expect(p).rejects.toMatchObject({ name: 'AccessDeniedException' });
const allowed = (p: Promise<unknown>) => expect(p).rejects.not.toMatchObject({ name: 'AccessDeniedException' });

describe('row grants on the local stack', () => {
  it('a read row cannot write: put, update, transaction', async () => {
    await denied(withGrant(reader, () => db.send(new PutCommand({ TableName: 't', Item: item }))));
    await denied(
      withGrant(reader, () =>
        db.send(
          new UpdateCommand({
            TableName: 't',
            Key: keys.entity(tenant, 'goal', 'g1'),
            UpdateExpression: 'SET v = :v',
            ExpressionAttributeValues: { ':v': 2 },
          }),
        ),
      ),
    );
    await denied(withGrant(reader, () => db.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: 't', Item: item } }] }))));
    await allowed(withGrant(reader, () => db.send(new GetCommand({ TableName: 't', Key: keys.entity(tenant, 'goal', 'g1') }))));
  });

  it('a write row writes; a none row does nothing; every row may lease rate-limit tokens', async () => {
    await allowed(withGrant(writer, () => db.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: 't', Item: item } }] }))));
    await denied(
      withGrant({ name: 'GET /openapi.json', table: 'none', sendsTo: [] }, () => db.send(new GetCommand({ TableName: 't', Key: item }))),
    );
    const lease = (Key: Record<string, string>) =>
      new UpdateCommand({ TableName: 't', Key, UpdateExpression: 'SET n = :n', ExpressionAttributeValues: { ':n': 1 } });
    await allowed(withGrant(reader, () => db.send(lease(limiterKeys.userShard(tenant, 'u1', 0)))));
    await allowed(withGrant(reader, () => db.send(lease(limiterKeys.tenantShard(tenant, 3)))));
    // The operator-set limits are not a lease: a read row may read them, not rewrite them.
    await denied(withGrant(reader, () => db.send(lease(limiterKeys.config(tenant)))));
  });

  it("no row writes the tenant's operator-set limits (rl#config), a write row neither: put, update, delete, in a transaction or a batch; reading them stays allowed", async () => {
    const config = limiterKeys.config(tenant);
    const update = (Key: Record<string, string>) =>
      new UpdateCommand({ TableName: 't', Key, UpdateExpression: 'SET rps = :n', ExpressionAttributeValues: { ':n': 1_000_000 } });
    for (const grant of [writer, reader]) {
      await denied(withGrant(grant, () => db.send(new PutCommand({ TableName: 't', Item: { ...config, rps: 1_000_000 } }))));
      await denied(withGrant(grant, () => db.send(update(config))));
      await denied(withGrant(grant, () => db.send(new DeleteCommand({ TableName: 't', Key: config }))));
      await allowed(withGrant(grant, () => db.send(new GetCommand({ TableName: 't', Key: config }))));
    }
    await denied(
      withGrant(writer, () =>
        db.send(
          new TransactWriteCommand({
            TransactItems: [{ Put: { TableName: 't', Item: item } }, { Delete: { TableName: 't', Key: config } }],
          }),
        ),
      ),
    );
    await denied(
      withGrant(writer, () =>
        db.send(
          new BatchWriteCommand({ RequestItems: { t: [{ PutRequest: { Item: item } }, { PutRequest: { Item: { ...config, rps: 1 } } }] } }),
        ),
      ),
    );
    await denied(withGrant(writer, () => db.send(new BatchWriteCommand({ RequestItems: { t: [{ DeleteRequest: { Key: config } }] } }))));
    // A condition on it is a read; the tenant's other items, and its bucket shards, stay writable.
    await allowed(
      withGrant(writer, () =>
        db.send(
          new TransactWriteCommand({
            TransactItems: [
              { Put: { TableName: 't', Item: item } },
              { ConditionCheck: { TableName: 't', Key: config, ConditionExpression: 'attribute_not_exists(PK)' } },
            ],
          }),
        ),
      ),
    );
    await allowed(withGrant(writer, () => db.send(new BatchWriteCommand({ RequestItems: { t: [{ PutRequest: { Item: item } }] } }))));
    await allowed(withGrant(writer, () => db.send(update(limiterKeys.tenantShard(tenant, 0)))));
    await allowed(withGrant(writer, () => db.send(update(keys.misc(tenant, 'rl', 'configuration')))));
    // outside any grant (the operator's command line, `npm run admin -- set-limits`): not checked here
    await allowed(db.send(update(config)));
  });

  it("names a batch write's every partition key, as IAM's LeadingKeys does", () => {
    const other = keys.entity(tenant, 'goal', 'g2');
    expect(
      tableActionsOf('BatchWriteItemCommand', {
        RequestItems: { t: [{ PutRequest: { Item: item } }, { DeleteRequest: { Key: { PK: { S: other.PK }, SK: { S: other.SK } } } }] },
      }),
    ).toEqual({ actions: ['dynamodb:BatchWriteItem'], partitionKeys: [item.PK, other.PK] });
  });

  it('outside any grant (AWS, tests) nothing is checked here', async () => {
    await allowed(db.send(new PutCommand({ TableName: 't', Item: item })));
  });

  it('a send to a queue the row does not name is refused; a named one is accepted', async () => {
    const queues = new LocalQueues({ beforeSend: requireQueueSend });
    queues.register({
      queue: 'notifications',
      maxReceiveCount: 3,
      batchSize: 1,
      timeoutSeconds: 1,
      maxConcurrency: 1,
      handler: async () => async () => undefined,
    });
    queues.register({
      queue: 'emails',
      maxReceiveCount: 3,
      batchSize: 1,
      timeoutSeconds: 1,
      maxConcurrency: 1,
      handler: async () => async () => undefined,
    });
    await expect(withGrant(writer, () => queues.send('emails', {}))).rejects.toMatchObject({ name: 'AccessDeniedException' });
    await expect(withGrant(writer, () => queues.send('notifications', {}))).resolves.toEqual(expect.any(String));
  });

  it('every authenticated row reads at least (the caller), as infra grants', () => {
    for (const r of routes) if (r.auth === 'jwt') expect(tableAccessOf(r), `${r.method} ${r.path}`).not.toBe('none');
  });

  it("every authenticated POST row writes: apiHandler honours a POST's Idempotency-Key, and its record is a write", () => {
    const readOnly = routes.filter((r) => r.auth === 'jwt' && r.method === 'POST' && tableAccessOf(r) !== 'write');
    expect(readOnly.map((r) => `${r.method} ${r.path}`)).toEqual([]);
  });
});

describe('stringLike (IAM StringLike without a regex)', () => {
  it('matches * as any run and ? as one character, anchored at both ends', () => {
    expect(stringLike('T#????#rl#user#*#*', 'T#abcd#rl#user#u1#3')).toBe(true);
    expect(stringLike('T#????#rl#user#*#*', 'T#abcd#rl#config')).toBe(false);
    expect(stringLike('a*b', 'ab')).toBe(true);
    expect(stringLike('a*b', 'abc')).toBe(false);
    expect(stringLike('a?c', 'abbc')).toBe(false);
    expect(stringLike('*', '')).toBe(true);
    expect(stringLike('', 'x')).toBe(false);
  });
});
