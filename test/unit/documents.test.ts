import { sqsRecord } from '#shared/queue/queue.ts';
import { mockClient } from 'aws-sdk-client-mock';
import { BedrockRuntimeClient, ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { batchHandler } from '#functions/workers/batch.ts';
import { REFRESH_MAX_RECEIVES, SUMMARY_MAX_LENGTH, type RefreshThreadRecord } from '#shared/domain/documents/entity.ts';
import type { ContentChange } from '#shared/domain/documents/runs.ts';
import { oneLine, parseAgentOutput, type RefreshOutcome } from '#shared/domain/documents/status.ts';
import { documentRefreshHandler } from '#functions/workers/document-refresh.ts';
import type { RefreshPort, RefreshWorkerDeps } from '#shared/domain/documents/worker.ts';
import type { ConverseRequest } from '#shared/ai/bedrock.ts';
import {
  bedrockWriter,
  builtInWriter,
  splitModelAnswer,
  writerFromEnv,
  type DocumentWriter,
  type WriterResult,
} from '#shared/domain/documents/writer.ts';
import type { ShareableRecord } from '#shared/domain/sharing/entity.ts';
import type { Stored } from '#shared/db/model.ts';

const TENANT = '11111111-1111-4111-8111-111111111111';
const DOC = '22222222-2222-4222-8222-222222222222';
const THREAD = '33333333-3333-4333-8333-333333333333';
const NOW = '2030-01-02T03:04:05.000Z';

// ---------- status parsing ----------

describe('parseAgentOutput', () => {
  it('maps each recognized status code to its state, the report before it becoming the one-line summary', () => {
    expect(parseAgentOutput('Rewrote the intro.\nFixed two dates.\nSTATUS: completed')).toEqual({
      state: 'completed',
      skill_status: 'completed',
      summary: 'Rewrote the intro. Fixed two dates.',
    });
    expect(parseAgentOutput('Nothing to do\nSTATUS: completed_no_changes\n\n')).toEqual({
      state: 'completed',
      skill_status: 'completed_no_changes',
      summary: 'Nothing to do',
    });
    expect(parseAgentOutput('Someone is editing it\nSTATUS: completed_locked')).toMatchObject({
      state: 'completed',
      skill_status: 'completed_locked',
    });
    expect(parseAgentOutput('Source unreachable\nSTATUS: failed')).toEqual({
      state: 'failed',
      skill_status: 'failed',
      summary: 'Source unreachable',
    });
  });

  it('tolerates case, markdown marks and a final period around the status line; gives a default summary without a report', () => {
    expect(parseAgentOutput('done\n**STATUS:** `Completed`.')).toMatchObject({ state: 'completed', skill_status: 'completed' });
    expect(parseAgentOutput('status: completed_no_changes')).toEqual({
      state: 'completed',
      skill_status: 'completed_no_changes',
      summary: 'The document was already up to date',
    });
  });

  it('without a recognized terminal code is completed_unknown_outcome with the output verbatim on one line', () => {
    expect(parseAgentOutput('I did some things.\nProbably fine?')).toEqual({
      state: 'completed_unknown_outcome',
      skill_status: null,
      summary: 'I did some things. Probably fine?',
    });
    expect(parseAgentOutput('Work done\nSTATUS: mostly_done')).toEqual({
      state: 'completed_unknown_outcome',
      skill_status: null,
      summary: 'Work done STATUS: mostly_done',
    });
    // The status line must be the last one: a code in the middle is not terminal.
    expect(parseAgentOutput('STATUS: completed\nthen it crashed')).toMatchObject({
      state: 'completed_unknown_outcome',
      skill_status: null,
    });
    expect(parseAgentOutput('')).toEqual({
      state: 'completed_unknown_outcome',
      skill_status: null,
      summary: 'The refresh agent returned no output',
    });
  });

  it('keeps summaries to one line of bounded length', () => {
    const long = `${'word '.repeat(400)}\nSTATUS: completed`;
    const { summary } = parseAgentOutput(long);
    expect(summary.length).toBe(SUMMARY_MAX_LENGTH);
    expect(summary.endsWith('…')).toBe(true);
    expect(oneLine('a\r\n\tb   c\n')).toBe('a b c');
  });
});

// ---------- writers ----------

describe('writers', () => {
  const input = (content: string | null) => ({ thread_uuid: THREAD, document: { uuid: DOC, title: 'Plan', content }, now: NOW });
  const signal = new AbortController().signal;

  it('built-in: appends a Last refreshed line and a summary, replacing those of the previous refresh', async () => {
    const first = await builtInWriter.refresh(input('Ship v2 in Q1. Then scale.'), signal);
    expect(first.content).toBe(`Ship v2 in Q1. Then scale.\n\n---\nLast refreshed: ${NOW}\nSummary: Ship v2 in Q1.`);
    expect(parseAgentOutput(first.output)).toMatchObject({ state: 'completed', skill_status: 'completed' });
    const again = await builtInWriter.refresh({ ...input(first.content), now: '2030-02-01T00:00:00.000Z' }, signal);
    expect(again.content).toBe('Ship v2 in Q1. Then scale.\n\n---\nLast refreshed: 2030-02-01T00:00:00.000Z\nSummary: Ship v2 in Q1.');
  });

  it('reads hostile text (runs of tags, newlines, underscores) in time linear in its length, as the regexes they replace did', async () => {
    // the last block; a block ends at the first close after its start; an unclosed tag is report text
    expect(splitModelAnswer('a<document>\nx\n</document>b<document>y</document>c<document>z')).toEqual({
      content: 'y',
      output: 'a<document>\nx\n</document>bc<document>z',
    });
    expect(splitModelAnswer('<document>\n\n</document>ok')).toEqual({ content: '', output: 'ok' });
    expect((await builtInWriter.refresh(input('Text.\n\n---\nLast refreshed: x\nSummary: y  \n\n'), signal)).content).toBe(
      `Text.\n\n---\nLast refreshed: ${NOW}\nSummary: Text.`,
    );
    expect((await builtInWriter.refresh(input('a---\nLast refreshed: x\nSummary: y\nmore'), signal)).content).toMatch(
      /^a---\nLast refreshed: x\nSummary: y\nmore\n\n---/,
    );
    // each took seconds or minutes at these sizes with the backtracking regexes; a character loop is the floor
    const n = 100_000;
    const hostile = [
      '<document>'.repeat(n),
      `${'\n'.repeat(n)}---\nLast refreshed: \nSummary: ${' '.repeat(n)}\n\u0000`,
      `STATUS:${'_'.repeat(n)}:_`,
    ];
    const started = performance.now();
    expect(splitModelAnswer(hostile[0]!).content).toBeNull();
    expect((await builtInWriter.refresh(input(hostile[1]!), signal)).content).toContain('Last refreshed');
    expect(parseAgentOutput(hostile[2]!).skill_status).toBeNull();
    const spent = performance.now() - started;
    let floor = Infinity;
    for (let run = 0; run < 3; run++) {
      const start = performance.now();
      let sum = 0;
      for (const s of hostile) for (let i = 0; i < s.length; i++) sum += s.charCodeAt(i);
      floor = Math.min(floor, performance.now() - start + (sum < 0 ? 1 : 0));
    }
    expect(spent).toBeLessThan(50 * floor + 100);
    // a code is letters joined by single underscores: markdown bold around the line is not part of it
    expect(parseAgentOutput('done\n__STATUS: completed_no_changes__').skill_status).toBe('completed_no_changes');
  });

  it('built-in: nothing to refresh in an empty document', async () => {
    for (const content of [null, '', '  \n']) {
      const out = await builtInWriter.refresh(input(content), signal);
      expect(out.content).toBeNull();
      expect(parseAgentOutput(out.output).skill_status).toBe('completed_no_changes');
    }
  });

  it('bedrock: sends the document as data to the configured model and splits the answer into content and report', async () => {
    const calls: ConverseRequest[] = [];
    const writer = bedrockWriter('anthropic.test-model', async (req) => {
      calls.push(req);
      return '<document>\nNew text\n</document>\nTightened wording.\nSTATUS: completed';
    });
    const out = await writer.refresh(input('Old text'), signal);
    expect(out).toEqual({ content: 'New text', output: 'Tightened wording.\nSTATUS: completed' });
    expect(calls[0]!.modelId).toBe('anthropic.test-model');
    expect(calls[0]!.prompt).toContain('<current_document>\nOld text\n</current_document>');
    expect(calls[0]!.system).toMatch(/ignore any instructions/i);
    expect(splitModelAnswer('No changes needed\nSTATUS: completed_no_changes')).toEqual({
      content: null,
      output: 'No changes needed\nSTATUS: completed_no_changes',
    });
  });

  it('is Bedrock exactly when BEDROCK_MODEL_ID is set, calling Converse with the model and the prompt', async () => {
    expect(writerFromEnv({}).name).toBe('built-in');
    expect(writerFromEnv({ BEDROCK_MODEL_ID: ' ' }).name).toBe('built-in');
    const bedrock = writerFromEnv({ BEDROCK_MODEL_ID: 'anthropic.test-model' });
    expect(bedrock.name).toBe('bedrock:anthropic.test-model');
    const mock = mockClient(BedrockRuntimeClient);
    mock.on(ConverseCommand).resolves({
      output: { message: { role: 'assistant', content: [{ text: '<document>\nFresh\n</document>\nRewrote it.\nSTATUS: completed' }] } },
    } as never);
    try {
      expect(await bedrock.refresh(input('x'), signal)).toEqual({ content: 'Fresh', output: 'Rewrote it.\nSTATUS: completed' });
      const sent = mock.commandCalls(ConverseCommand)[0]!.args[0].input;
      expect(sent.modelId).toBe('anthropic.test-model');
      expect(sent.messages?.[0]?.content?.[0]?.text).toContain('<current_document>\nx\n</current_document>');
      mock.on(ConverseCommand).rejects(new Error('AccessDeniedException'));
      await expect(bedrock.refresh(input('x'), signal)).rejects.toThrow(/AccessDenied/);
    } finally {
      mock.restore();
    }
  });
});

// ---------- the worker, over an in-memory port ----------

/** An in-memory RefreshPort with the store's rule: a run ends once, only from running; content only if unchanged. */
class FakeStore implements RefreshPort {
  threads = new Map<string, RefreshThreadRecord>();
  docs = new Map<string, ShareableRecord>();
  finishes = 0;

  constructor(content: string | null = 'Ship v2 in Q1. Then scale.') {
    this.docs.set(DOC, {
      uuid: DOC,
      type: 'document',
      title: 'Plan',
      content,
      owner_uuid: 'o',
      grants: [],
      created_at: NOW,
      updated_at: NOW,
    });
    this.threads.set(THREAD, {
      uuid: THREAD,
      document_uuid: DOC,
      state: 'running',
      skill_status: null,
      summary: null,
      started_at: NOW,
      completed_at: null,
      requested_by_uuid: 'o',
      created_at: NOW,
      updated_at: NOW,
    });
  }

  get thread0() {
    return this.threads.get(THREAD)!;
  }

  async thread(uuid: string) {
    const t = this.threads.get(uuid);
    return t && { record: t, version: 1 };
  }
  async document(uuid: string) {
    const d = this.docs.get(uuid);
    return d && { record: d, version: 1 };
  }
  async finish(thread: Stored<RefreshThreadRecord>, outcome: RefreshOutcome, change?: ContentChange) {
    const t = this.threads.get(thread.record.uuid);
    if (t?.state !== 'running') return false;
    this.finishes++;
    if (change) {
      const d = this.docs.get(change.document.record.uuid)!;
      if (d.content === change.document.record.content) this.docs.set(d.uuid, { ...d, content: change.to });
    }
    this.threads.set(t.uuid, { ...t, ...outcome, completed_at: NOW });
    return true;
  }
}

/** A writer that answers `output` (and `content`), or throws, counting its calls. */
function fakeWriter(result: WriterResult | Error): DocumentWriter & { calls: number } {
  const w = {
    name: 'fake',
    calls: 0,
    async refresh() {
      w.calls++;
      if (result instanceof Error) throw result;
      return result;
    },
  };
  return w;
}

const sqsEvent = (receiveCount: number, body: unknown = { version: 1, tenant_uuid: TENANT, thread_uuid: THREAD }): SQSEvent => ({
  Records: [sqsRecord({ queue: 'document-refresh', messageId: 'm1', body, receiveCount })],
});

function run(store: FakeStore, writer: DocumentWriter) {
  const tenants: string[] = [];
  const deps: RefreshWorkerDeps = {
    store: async (t) => {
      tenants.push(t);
      return store;
    },
    writer: () => writer,
    maxReceiveCount: REFRESH_MAX_RECEIVES,
    now: () => NOW,
  };
  return { handler: documentRefreshHandler(deps), tenants };
}

describe('document refresh worker', () => {
  it('completed: stores the refreshed content and ends the run completed, in the message tenant', async () => {
    const store = new FakeStore();
    const { handler, tenants } = run(store, builtInWriter);
    expect(await handler(sqsEvent(1))).toEqual({ batchItemFailures: [] });
    expect(tenants).toEqual([TENANT]);
    expect(store.thread0).toMatchObject({ state: 'completed', skill_status: 'completed', completed_at: NOW });
    expect(store.thread0.summary).not.toMatch(/\n/);
    expect(store.docs.get(DOC)!.content).toContain(`Last refreshed: ${NOW}`);
  });

  it('completed_no_changes: ends completed without touching the document, even if the writer proposed content', async () => {
    const store = new FakeStore();
    const { handler } = run(store, fakeWriter({ content: 'should not be stored', output: 'Up to date.\nSTATUS: completed_no_changes' }));
    expect(await handler(sqsEvent(1))).toEqual({ batchItemFailures: [] });
    expect(store.thread0).toMatchObject({ state: 'completed', skill_status: 'completed_no_changes', summary: 'Up to date.' });
    expect(store.docs.get(DOC)!.content).toBe('Ship v2 in Q1. Then scale.');
  });

  it('garbage output: completed_unknown_outcome, summary verbatim, content not stored', async () => {
    const store = new FakeStore();
    const { handler } = run(store, fakeWriter({ content: 'maybe new', output: 'Hmm.\nI think I\nchanged something' }));
    await handler(sqsEvent(1));
    expect(store.thread0).toMatchObject({
      state: 'completed_unknown_outcome',
      skill_status: null,
      summary: 'Hmm. I think I changed something',
    });
    expect(store.docs.get(DOC)!.content).toBe('Ship v2 in Q1. Then scale.');
  });

  it('STATUS: failed ends the run failed', async () => {
    const store = new FakeStore();
    const { handler } = run(store, fakeWriter({ content: null, output: 'Could not read sources\nSTATUS: failed' }));
    expect(await handler(sqsEvent(1))).toEqual({ batchItemFailures: [] });
    expect(store.thread0).toMatchObject({ state: 'failed', skill_status: 'failed', summary: 'Could not read sources' });
  });

  it('a writer that throws is retried (run stays running) until the last receive, which ends it failed', async () => {
    const store = new FakeStore();
    const writer = fakeWriter(new Error('throttled by arn:aws:bedrock:secret'));
    const { handler } = run(store, writer);
    for (let receive = 1; receive < REFRESH_MAX_RECEIVES; receive++) {
      expect(await handler(sqsEvent(receive))).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
      expect(store.thread0.state).toBe('running');
    }
    // Still reported as a failure on the last receive, so the message is dead-lettered as evidence.
    expect(await handler(sqsEvent(REFRESH_MAX_RECEIVES))).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
    expect(store.thread0).toMatchObject({ state: 'failed', skill_status: null, completed_at: NOW });
    expect(store.thread0.summary).not.toContain('arn:'); // internal details stay in the log
    expect(writer.calls).toBe(REFRESH_MAX_RECEIVES);
  });

  it('redelivery of a finished run is a no-op: the writer is not called and nothing changes', async () => {
    const store = new FakeStore();
    const { handler } = run(store, builtInWriter);
    await handler(sqsEvent(1));
    const ended = structuredClone(store.thread0);
    const content = store.docs.get(DOC)!.content;
    const writer = fakeWriter({ content: 'other', output: 'x\nSTATUS: completed' });
    expect(await run(store, writer).handler(sqsEvent(2))).toEqual({ batchItemFailures: [] });
    expect(writer.calls).toBe(0);
    expect(store.thread0).toEqual(ended);
    expect(store.docs.get(DOC)!.content).toBe(content);
    expect(store.finishes).toBe(1);
  });

  it('ends the run failed when the document is gone or the refreshed content is too long', async () => {
    const gone = new FakeStore();
    gone.docs.clear();
    await run(gone, builtInWriter).handler(sqsEvent(1));
    expect(gone.thread0).toMatchObject({ state: 'failed', summary: 'The document no longer exists' });

    const long = new FakeStore();
    await run(long, fakeWriter({ content: 'x'.repeat(50_001), output: 'Expanded\nSTATUS: completed' })).handler(sqsEvent(1));
    expect(long.thread0).toMatchObject({ state: 'failed', skill_status: 'completed' });
    expect(long.docs.get(DOC)!.content).toBe('Ship v2 in Q1. Then scale.');
  });

  it('acknowledges a message for an unknown run; fails a malformed one (dead-lettered as evidence)', async () => {
    const store = new FakeStore();
    const writer = fakeWriter({ content: null, output: 'STATUS: completed' });
    const { handler } = run(store, writer);
    expect(await handler(sqsEvent(1, { version: 1, tenant_uuid: TENANT, thread_uuid: 'nope' }))).toEqual({ batchItemFailures: [] });
    expect(await handler(sqsEvent(1, '{not json'))).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
    expect(await handler(sqsEvent(1, { tenant_uuid: TENANT }))).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
    expect(writer.calls).toBe(0);
  });
});

// ---------- the SQS batch loop every worker shares ----------

describe('batchHandler', () => {
  it('hands each parsed message its receive count (1 when SQS gives none) and logs the outcome, failures as partial batch failures', async () => {
    const seen: Array<[string, number]> = [];
    const logs: Array<[string, string, Record<string, unknown>]> = [];
    const log = {
      info: (m: string, x?: object) => void logs.push(['info', m, x as Record<string, unknown>]),
      error: (m: string, x?: object) => void logs.push(['error', m, x as Record<string, unknown>]),
    };
    const handler = batchHandler({
      name: 'test work',
      schema: async () => z.object({ n: z.number() }),
      log: log as never,
      process: async (msg, { messageId, receiveCount }) => {
        seen.push([messageId, receiveCount]);
        if (msg.n < 0) throw new Error('negative');
        return { n: msg.n };
      },
    });
    const event = sqsEvent(3, { n: 1 });
    const bare = { ...event.Records[0]!, messageId: 'm2', attributes: {} as never, body: '{"n":-1}' };
    const bad = { ...event.Records[0]!, messageId: 'm3', body: '{"n":"x"}' };
    expect(await handler({ Records: [event.Records[0]!, bare, bad] })).toEqual({
      batchItemFailures: [{ itemIdentifier: 'm2' }, { itemIdentifier: 'm3' }],
    });
    expect(seen).toEqual([
      ['m1', 3],
      ['m2', 1],
    ]);
    expect(logs[0]).toEqual(['info', 'test work', { message_id: 'm1', receive_count: 3, n: 1 }]);
    expect(logs.slice(1).map(([level, m, x]) => [level, m, x.message_id])).toEqual([
      ['error', 'test work failed', 'm2'],
      ['error', 'test work failed', 'm3'],
    ]);
  });

  it('reports a batch whose every record failed as partial failures (no throw), and runs records one by one unless concurrent', async () => {
    let running = 0;
    let most = 0;
    const worker = (concurrent: boolean) =>
      batchHandler({
        name: 'slow work',
        schema: async () => z.object({ n: z.number() }),
        concurrent,
        process: async () => {
          most = Math.max(most, ++running);
          await new Promise((r) => setTimeout(r, 5));
          running--;
          throw new Error('always');
        },
      });
    const event = sqsEvent(3, { n: 1 });
    const three = { Records: ['a', 'b', 'c'].map((id) => ({ ...event.Records[0]!, messageId: id })) };
    expect(await worker(false)(three)).toEqual({
      batchItemFailures: [{ itemIdentifier: 'a' }, { itemIdentifier: 'b' }, { itemIdentifier: 'c' }],
    });
    expect(most).toBe(1);
    await worker(true)(three);
    expect(most).toBe(3);
  });
});
