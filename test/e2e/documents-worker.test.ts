import { sqsRecord } from '#shared/queue/queue.ts';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import { newDbMetrics, withDbMetrics } from '#shared/db/metrics.ts';
import { createEntity } from '../support/seed.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '#shared/db/keys.ts';
import {
  REFRESH_MAX_RECEIVES,
  RUN_RECORD_TTL_DAYS,
  refreshThreadEntity,
  type RefreshThreadRecord,
} from '#shared/domain/documents/entity.ts';
import { finishRun, getThread, runningThreadOf } from '#shared/domain/documents/runs.ts';
import { documentRefreshHandler } from '#functions/workers/document-refresh.ts';
import { storeRefreshPort } from '#shared/domain/documents/worker.ts';
import type { DocumentWriter } from '#shared/domain/documents/writer.ts';
import { shareableEntity } from '#shared/domain/sharing/entity.ts';
import { newTenant, type Api, type TenantFixture } from '../support/api.ts';

/**
 * The refresh worker against the real table (DynamoDB Local), invoked in this process with fake writers:
 * the at-least-once and single-ending guarantees live in the store's conditional writes, which the unit
 * tests' in-memory port only imitates.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const event = (tenant: string, thread: string, receiveCount: number): SQSEvent => ({
  Records: [
    sqsRecord({
      queue: 'document-refresh',
      messageId: `m-${thread}`,
      body: { version: 1, tenant_uuid: tenant, thread_uuid: thread },
      receiveCount,
    }),
  ],
});

function countingWriter(answer: () => Promise<{ content: string | null; output: string }>): DocumentWriter & { calls: number } {
  const w = { name: 'fake', calls: 0, refresh: async () => (w.calls++, answer()) };
  return w;
}

describe('document refresh worker on the real table', () => {
  let t: TenantFixture;
  let owner: { uuid: string; api: Api };
  let ctx: DataCtx;
  beforeAll(async () => {
    t = await newTenant();
    owner = await t.user();
    ctx = { tenantId: t.tenantUuid, db: baseDb() };
  });

  const createDoc = async (content: string) => (await owner.api.post('/documents', { title: 'Doc', content })).body.data.record;
  const handlerWith = (writer: DocumentWriter) =>
    documentRefreshHandler({
      store: async (tenant) => storeRefreshPort({ tenantId: tenant, db: baseDb() }),
      writer: () => writer,
      maxReceiveCount: REFRESH_MAX_RECEIVES,
    });
  async function running(documentUuid: string): Promise<RefreshThreadRecord> {
    const now = new Date().toISOString();
    const thread: RefreshThreadRecord = {
      uuid: crypto.randomUUID(),
      document_uuid: documentUuid,
      state: 'running',
      skill_status: null,
      summary: null,
      started_at: now,
      completed_at: null,
      requested_by_uuid: owner.uuid,
      created_at: now,
      updated_at: now,
    };
    await createEntity(ctx, refreshThreadEntity, thread);
    return thread;
  }

  it('a redelivered message of a finished run calls no writer and changes nothing', async () => {
    const doc = await createDoc('Text.');
    const start = await owner.api.post(`/documents/${doc.uuid}/refresh`);
    const thread = start.body.thread_uuid as string;
    for (let i = 0; (await getThread(ctx, thread))?.state === 'running'; i++) {
      if (i > 100) throw new Error('run did not end');
      await sleep(100);
    }
    const ended = await getThread(ctx, thread);
    // A finished run is kept 30 days for polling, then the table's TTL removes it.
    const item = (
      await baseDb().send(
        new GetCommand({
          TableName: process.env.TABLE_NAME!,
          Key: keys.entity(t.tenantUuid, 'refresh_thread', thread),
          ConsistentRead: true,
        }),
      )
    ).Item!;
    expect(item.expires_at).toBe(Math.floor(Date.parse(ended!.completed_at!) / 1000) + RUN_RECORD_TTL_DAYS * 86_400);
    const content = (await owner.api.get(`/documents/${doc.uuid}`)).body.data.record.content;
    const writer = countingWriter(async () => ({ content: 'overwritten', output: 'x\nSTATUS: completed' }));
    expect(await handlerWith(writer)(event(t.tenantUuid, thread, 2))).toEqual({ batchItemFailures: [] });
    expect(writer.calls).toBe(0);
    expect(await getThread(ctx, thread)).toEqual(ended);
    expect((await owner.api.get(`/documents/${doc.uuid}`)).body.data.record.content).toBe(content);
  });

  it('two deliveries racing on one run end it once; only the winner writes content', async () => {
    const doc = await createDoc('Original.');
    const thread = await running(doc.uuid);
    let n = 0;
    const writer = countingWriter(async () => ({ content: `Version ${++n}`, output: 'done\nSTATUS: completed' }));
    const handler = handlerWith(writer);
    await Promise.all([handler(event(t.tenantUuid, thread.uuid, 1)), handler(event(t.tenantUuid, thread.uuid, 1))]);
    const ended = (await getThread(ctx, thread.uuid))!;
    expect(ended).toMatchObject({ state: 'completed', skill_status: 'completed' });
    expect(['Version 1', 'Version 2']).toContain((await owner.api.get(`/documents/${doc.uuid}`)).body.data.record.content);
    expect(await finishRun(ctx, thread.uuid, { state: 'failed', skill_status: null, summary: 'late' })).toEqual({
      applied: false,
      thread: ended,
    });
    // The running claim was released with the ending: the document is free for a new run.
    expect(await runningThreadOf(ctx, doc.uuid)).toBeUndefined();
  });

  it('the last receive of a throwing writer ends the run failed and frees the document', async () => {
    const doc = await createDoc('Text.');
    const thread = await running(doc.uuid);
    expect((await runningThreadOf(ctx, doc.uuid))?.uuid).toBe(thread.uuid);
    const handler = handlerWith(countingWriter(async () => Promise.reject(new Error('model unavailable'))));
    expect(((await handler(event(t.tenantUuid, thread.uuid, 1))) as SQSBatchResponse).batchItemFailures).toHaveLength(1);
    expect((await getThread(ctx, thread.uuid))!.state).toBe('running');
    expect(((await handler(event(t.tenantUuid, thread.uuid, REFRESH_MAX_RECEIVES))) as SQSBatchResponse).batchItemFailures).toHaveLength(1);
    expect(await getThread(ctx, thread.uuid)).toMatchObject({ state: 'failed', skill_status: null, completed_at: expect.any(String) });
    expect(await runningThreadOf(ctx, doc.uuid)).toBeUndefined();
    const status = await owner.api.get(`/chat/refresh_threads/${thread.uuid}/status`);
    expect(status.body).toMatchObject({
      state: 'failed',
      summary: `The refresh agent failed ${REFRESH_MAX_RECEIVES} times; try again later`,
    });
  });

  it('does not overwrite content that changed while the writer worked: the run ends failed', async () => {
    const doc = await createDoc('Before.');
    const thread = await running(doc.uuid);
    const port = storeRefreshPort(ctx);
    const read = (await port.document(doc.uuid))!; // what the writer was given
    await new WriteTx(ctx).replace(shareableEntity, read, { ...read.record, content: 'Edited meanwhile.' }).commit();
    const out = await finishRun(
      ctx,
      thread.uuid,
      { state: 'completed', skill_status: 'completed', summary: 'ok' },
      { document: read, to: 'After.' },
    );
    expect(out.applied).toBe(true);
    expect(out.thread).toMatchObject({
      state: 'failed',
      skill_status: 'completed',
      summary: expect.stringMatching(/changed while it was being refreshed/),
    });
    expect((await owner.api.get(`/documents/${doc.uuid}`)).body.data.record.content).toBe('Edited meanwhile.');
  });

  it('ends a run with the reads it made before the writer (3 round trips), and still stores content after a grant meanwhile', async () => {
    const doc = await createDoc('Text.');
    const thread = await running(doc.uuid);
    const writer = countingWriter(async () => ({ content: 'Refreshed.', output: 'done\nSTATUS: completed' }));
    const metrics = newDbMetrics();
    expect(await withDbMetrics(metrics, () => handlerWith(writer)(event(t.tenantUuid, thread.uuid, 1)))).toEqual({ batchItemFailures: [] });
    expect(metrics.roundTrips).toBe(3); // the run, the document, the transaction
    expect((await owner.api.get(`/documents/${doc.uuid}`)).body.data.record.content).toBe('Refreshed.');

    // A grant changes the document's version, not its content: the first attempt's condition fails, the retry reads again and stores.
    const other = await t.user();
    const thread2 = await running(doc.uuid);
    const read = (await storeRefreshPort(ctx).document(doc.uuid))!;
    expect((await owner.api.put(`/documents/${doc.uuid}/grants`, { user_uuid: other.uuid, level: 'view' })).status).toBe(200);
    const out = await finishRun(
      ctx,
      thread2.uuid,
      { state: 'completed', skill_status: 'completed', summary: 'ok' },
      { document: read, to: 'Again.' },
    );
    expect(out.thread).toMatchObject({ state: 'completed' });
    const after = (await owner.api.get(`/documents/${doc.uuid}`)).body.data.record;
    expect(after.content).toBe('Again.');
    expect(after.grants.map((g: any) => g.user_uuid)).toEqual([other.uuid]);
  });
});
