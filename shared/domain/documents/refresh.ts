import { orStored, runCommand } from '#shared/command/run.ts';
import { accept } from '#shared/decision.ts';
import { newId, UUID_RE } from '#shared/ids.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import {
  DOCUMENT_REFRESH_QUEUE,
  refreshThreadEntity,
  type RefreshThreadRecord,
  type RunningThread,
} from '#shared/domain/documents/entity.ts';
import { expireIfStale, finishRun, getThread, runningThreadOf } from '#shared/domain/documents/runs.ts';
import type { DocumentRefreshMessage } from '#shared/domain/documents/worker.ts';
import { shareableAccess, shareableChecks } from '#shared/domain/sharing/access.ts';
import { loadShareable } from '#shared/domain/sharing/load-shareable.ts';
import { ForbiddenError, NotFoundError } from '#shared/errors.ts';
import { queueSender } from '#shared/queue/queue.ts';

/*
 * Document refresh (spec: application endpoints; contract section 8). Rules decided here:
 *  - Starting needs edit on the document: the owner, admins, or an edit/manage grant, viewers (role)
 *    excluded, exactly the document's `checks.can_edit`.
 *  - At most one run per document is running. A start while one runs joins it: 202 with that run's
 *    thread_uuid (`already_running: true`), no second run, no second message.
 *  - Polling needs only the thread uuid, from any user of the tenant (spec: Authentication 5).
 */

/** A start always answers a running run: a new one, or the one it joined. */
export interface RefreshStart {
  thread: RunningThread;
  alreadyRunning: boolean;
}

/** The document, if the caller may refresh it: 404 when not in the tenant, 403 without edit access. */
export async function refreshableDocument(ctx: DomainCtx, shareableUuid: string) {
  const { record: doc } = await loadShareable(ctx, 'documents', shareableUuid);
  if (!shareableChecks(ctx.caller, shareableAccess(ctx.caller, doc)).can_edit)
    throw new ForbiddenError('Refreshing a document needs edit access: the owner, admins, or an edit or manage grant');
  return doc;
}

export async function startRefresh(ctx: DomainCtx, shareableUuid: string): Promise<RefreshStart> {
  const doc = await refreshableDocument(ctx, shareableUuid);
  // A stale run (its message was lost) is ended first, its own command, releasing the claim for the new run.
  const seen = await runningThreadOf(ctx, doc.uuid);
  const live = seen && (await expireIfStale(ctx, seen)).state === 'running' ? seen : undefined;
  const ids = { uuid: newId() };
  return runCommand(ctx, {
    ids,
    // a start that waited for a run to end starts after it
    clock: { perAttempt: true },
    // A retry reads again: a concurrent start that took the claim first (a lost race) is joined.
    read: async ({ attempt }) => (attempt === 0 ? live : runningThreadOf(ctx, doc.uuid)),
    decide: (running, now, { uuid }) =>
      accept<RefreshStart>(
        running
          ? { thread: running, alreadyRunning: true }
          : {
              thread: {
                uuid,
                document_uuid: doc.uuid,
                state: 'running',
                skill_status: null,
                summary: null,
                started_at: now,
                completed_at: null,
                requested_by_uuid: ctx.caller.userId,
                created_at: now,
                updated_at: now,
              },
              alreadyRunning: false,
            },
      ),
    write: (tx, start) => {
      if (!start.alreadyRunning) tx.create(refreshThreadEntity, start.thread);
      return start;
    },
    stored: orStored(refreshThreadEntity, ids.uuid, (thread) => ({ thread: thread as RunningThread, alreadyRunning: false })),
    after: async (start) => {
      if (!start.alreadyRunning) await enqueueRun(ctx, start.thread);
      return start;
    },
  });
}

/**
 * Hands the run to the worker. If the queue refuses, the run is ended `failed` (releasing the document's
 * claim) before the error answers 500, so a client retry starts a fresh run instead of joining a run that
 * nobody will carry out.
 */
async function enqueueRun(ctx: DomainCtx, thread: RefreshThreadRecord): Promise<void> {
  const message: DocumentRefreshMessage = { version: 1, tenant_uuid: ctx.tenantId, thread_uuid: thread.uuid };
  try {
    await queueSender().send(DOCUMENT_REFRESH_QUEUE, message);
  } catch (err) {
    ctx.log.error('document refresh not queued; ending the run failed', { thread_uuid: thread.uuid, error: (err as Error).message });
    await finishRun(ctx, thread.uuid, { state: 'failed', skill_status: null, summary: 'The refresh could not be queued; start it again' });
    throw err;
  }
}

/** A run of the caller's tenant by its uuid (anything else, another tenant's run included, is 404). */
export async function refreshStatus(ctx: DomainCtx, threadUuid: string): Promise<RefreshThreadRecord> {
  const notFound = () => new NotFoundError('Refresh thread', threadUuid);
  if (!UUID_RE.test(threadUuid)) throw notFound();
  const thread = await getThread(ctx, threadUuid.toLowerCase());
  if (!thread) throw notFound();
  return expireIfStale(ctx, thread);
}
