import { nowIso } from '#shared/clock.ts';
import type { Stored } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { refreshThreadEntity, WRITER_TIMEOUT_MS, type RefreshState, type RefreshThreadRecord } from '#shared/domain/documents/entity.ts';
import { finishRun, type ContentChange } from '#shared/domain/documents/runs.ts';
import { parseAgentOutput, type RefreshOutcome } from '#shared/domain/documents/status.ts';
import type { DocumentWriter, WriterResult } from '#shared/domain/documents/writer.ts';
import { MAX_CONTENT_LENGTH, shareableEntity, type ShareableRecord } from '#shared/domain/sharing/entity.ts';
import { SHAREABLE_TYPE_BY_PATH } from '#shared/domain/sharing/types.ts';
import type { Log } from '#shared/logger.ts';

/**
 * One message per refresh run. It names the run only: the worker reads the run and the document when it
 * runs (the content may be 50 KB, and what counts is the document as it is then, not when it was queued).
 */
export interface DocumentRefreshMessage {
  version: 1;
  tenant_uuid: string;
  thread_uuid: string;
}

/** What a run needs from one tenant's data: the worker's seam (an in-memory fake in unit tests). */
export interface RefreshPort {
  /** The run and the document with their versions, read consistently: `finish` is conditioned on them. */
  thread(uuid: string): Promise<Stored<RefreshThreadRecord> | undefined>;
  document(uuid: string): Promise<Stored<ShareableRecord> | undefined>;
  /** Ends the run if it is still running; false when it had already ended (nothing written). */
  finish(thread: Stored<RefreshThreadRecord>, outcome: RefreshOutcome, change?: ContentChange): Promise<boolean>;
}

/** The port over the table, confined to the message's tenant like any request. */
export function storeRefreshPort(ctx: DataCtx): RefreshPort {
  return {
    thread: (uuid) => getEntity(ctx, refreshThreadEntity, uuid, true),
    async document(uuid) {
      const doc = await getEntity(ctx, shareableEntity, uuid, true);
      return doc?.record.type === SHAREABLE_TYPE_BY_PATH.documents ? doc : undefined;
    },
    finish: async (thread, outcome, change) => (await finishRun(ctx, thread.record.uuid, outcome, change, thread)).applied,
  };
}

export interface RefreshWorkerDeps {
  store(tenantId: string): Promise<RefreshPort>;
  /** Chosen per run, not at cold start (BEDROCK_MODEL_ID or the built-in writer). */
  writer(): DocumentWriter;
  /** The queue's maxReceiveCount: on that receive a writer failure ends the run `failed`. */
  maxReceiveCount: number;
  writerTimeoutMs?: number;
  now?: () => string;
  log?: Pick<Log, 'info' | 'warn' | 'error'>;
}

export type RunResult =
  | { result: 'ended'; state: RefreshState }
  | { result: 'already_ended'; state: RefreshState }
  | { result: 'unknown_thread' };

/**
 * Carries out one run. At-least-once delivery: a run that already ended (redelivery, or a concurrent
 * delivery that finished first) is left alone and the writer is not called again. A writer failure is
 * thrown so the queue retries it; on the last receive the run is first ended `failed`, so a poller never
 * waits on a run nobody will finish. The failure summary is generic: writer errors can carry internal
 * details (ARNs, endpoints) that belong in the log, not in front of users.
 */
export async function runRefresh(msg: DocumentRefreshMessage, receiveCount: number, deps: RefreshWorkerDeps): Promise<RunResult> {
  const port = await deps.store(msg.tenant_uuid);
  const stored = await port.thread(msg.thread_uuid);
  if (!stored) return { result: 'unknown_thread' };
  const thread = stored.record;
  if (thread.state !== 'running') return { result: 'already_ended', state: thread.state };

  const end = async (outcome: RefreshOutcome, change?: ContentChange): Promise<RunResult> => {
    if (await port.finish(stored, outcome, change)) return { result: 'ended', state: outcome.state };
    const now = await port.thread(thread.uuid);
    return { result: 'already_ended', state: now?.record.state ?? outcome.state };
  };

  const doc = await port.document(thread.document_uuid);
  if (!doc) return end({ state: 'failed', skill_status: null, summary: 'The document no longer exists' });

  let written: WriterResult;
  try {
    written = await deps.writer().refresh(
      {
        thread_uuid: thread.uuid,
        document: { uuid: doc.record.uuid, title: doc.record.title, content: doc.record.content },
        now: (deps.now ?? nowIso)(),
      },
      AbortSignal.timeout(deps.writerTimeoutMs ?? WRITER_TIMEOUT_MS),
    );
  } catch (err) {
    if (receiveCount >= deps.maxReceiveCount)
      await port.finish(stored, {
        state: 'failed',
        skill_status: null,
        summary: `The refresh agent failed ${receiveCount} times; try again later`,
      });
    throw err;
  }

  const outcome = parseAgentOutput(written.output);
  // Content is stored only when the agent says it completed with changes: any other code (or none) leaves the document as it was.
  if (outcome.skill_status !== 'completed' || written.content === null) return end(outcome);
  if (written.content.length > MAX_CONTENT_LENGTH)
    return end({
      state: 'failed',
      skill_status: outcome.skill_status,
      summary: `The refreshed document would exceed ${MAX_CONTENT_LENGTH} characters; it was not changed`,
    });
  return end(outcome, { document: doc, to: written.content });
}
