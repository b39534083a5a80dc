import { runCommand } from '#shared/command/run.ts';
import type { Stored } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { findUnique, getEntity } from '#shared/db/reads.ts';
import { accept, type Decision } from '#shared/decision.ts';
import {
  REFRESH_STALE_AFTER_MS,
  refreshThreadEntity,
  RUNNING_CLAIM,
  type RefreshThreadRecord,
  type RunningThread,
} from '#shared/domain/documents/entity.ts';
import type { RefreshOutcome } from '#shared/domain/documents/status.ts';
import { shareableEntity, type ShareableRecord } from '#shared/domain/sharing/entity.ts';

/**
 * Reads and state changes of refresh runs, on a tenant-confined DataCtx: shared by the HTTP endpoints and
 * the worker, so "a run ends once, only from running" is written in one place.
 */

export async function getThread(ctx: DataCtx, threadUuid: string): Promise<RefreshThreadRecord | undefined> {
  // Strongly consistent: a poll right after the start must find the run, and one right after it ended must not say running.
  return (await getEntity(ctx, refreshThreadEntity, threadUuid, true))?.record;
}

/** The document's running run, from its running claim (consistent read: the claim may have changed a moment ago). */
export async function runningThreadOf(ctx: DataCtx, documentUuid: string): Promise<RunningThread | undefined> {
  const holder = await findUnique(ctx, RUNNING_CLAIM, documentUuid, true);
  const thread = holder ? await getThread(ctx, holder) : undefined;
  return thread?.state === 'running' ? (thread as RunningThread) : undefined;
}

/** Refreshed content to store with the outcome, if the document still holds what the writer was given. */
export interface ContentChange {
  /** The document as the writer read it: its content is what was refreshed, its version conditions the write. */
  document: Stored<ShareableRecord>;
  to: string;
}

/**
 * Ends a run: only from `running` (a redelivered message, a retried batch or a racing staleness check finds
 * it ended and changes nothing: `applied: false`). The thread's new state, `completed_at`, the release of the
 * document's running claim and the refreshed content commit in one transaction conditioned on the versions
 * read, so a run never ends twice and content is never written by a run that did not end. Content changed by
 * someone else since the writer read it is not overwritten: the run ends `failed` instead.
 * The first attempt uses what the caller already read (`read`, `change.document`) instead of reading again:
 * a change since then fails that attempt's conditions, and the retry reads both afresh.
 */
export async function finishRun(
  ctx: DataCtx,
  threadUuid: string,
  outcome: RefreshOutcome,
  change?: ContentChange,
  read?: Stored<RefreshThreadRecord>,
): Promise<{ applied: boolean; thread?: RefreshThreadRecord }> {
  return runCommand(ctx, {
    clock: { perAttempt: true },
    read: async ({ attempt }) => {
      const first = attempt === 0;
      const thread = (first ? read : undefined) ?? (await getEntity(ctx, refreshThreadEntity, threadUuid, true));
      if (!change || thread?.record.state !== 'running') return { thread };
      return { thread, document: first ? change.document : await getEntity(ctx, shareableEntity, change.document.record.uuid, true) };
    },
    decide: (seen, now) => decideFinish(seen, outcome, change, now),
    write: (tx, w, seen) => {
      if (!w) return { applied: false, thread: seen.thread?.record };
      if (w.content !== undefined)
        tx.replace(shareableEntity, seen.document!, { ...seen.document!.record, content: w.content, updated_at: w.thread.updated_at });
      tx.replace(refreshThreadEntity, seen.thread!, w.thread);
      return { applied: true, thread: w.thread };
    },
  });
}

/**
 * The run as it ends (undefined: it is not running, nothing changes) and the refreshed content to store, if the
 * document still holds what the writer was given; else the run ends `failed`, the content untouched.
 */
function decideFinish(
  seen: { thread?: Stored<RefreshThreadRecord>; document?: Stored<ShareableRecord> },
  outcome: RefreshOutcome,
  change: ContentChange | undefined,
  now: string,
): Decision<{ thread: RefreshThreadRecord; content?: string } | undefined> {
  const current = seen.thread?.record;
  if (current?.state !== 'running') return accept(undefined);
  let final = outcome;
  let content: string | undefined;
  if (change) {
    const doc = seen.document?.record;
    if (!doc)
      final = { state: 'failed', skill_status: outcome.skill_status, summary: 'The document was deleted while it was being refreshed' };
    else if (doc.content !== change.document.record.content)
      final = {
        state: 'failed',
        skill_status: outcome.skill_status,
        summary: 'The document changed while it was being refreshed; the refreshed content was discarded. Refresh it again.',
      };
    else if (doc.content !== change.to) content = change.to;
  }
  const thread: RefreshThreadRecord = {
    ...current,
    state: final.state,
    skill_status: final.skill_status,
    summary: final.summary,
    completed_at: now,
    updated_at: now,
  };
  return accept({ thread, content });
}

export const isStale = (t: RefreshThreadRecord, now = Date.now()) =>
  t.state === 'running' && now - Date.parse(t.started_at) > REFRESH_STALE_AFTER_MS;

/** A run whose message was lost ends `failed` when next looked at (see REFRESH_STALE_AFTER_MS); others are returned as they are. */
export async function expireIfStale(ctx: DataCtx, thread: RefreshThreadRecord): Promise<RefreshThreadRecord> {
  if (!isStale(thread)) return thread;
  const minutes = Math.round(REFRESH_STALE_AFTER_MS / 60_000);
  const { thread: after } = await finishRun(ctx, thread.uuid, {
    state: 'failed',
    skill_status: null,
    summary: `The refresh did not finish within ${minutes} minutes and was abandoned; start a new one`,
  });
  return after ?? thread;
}
