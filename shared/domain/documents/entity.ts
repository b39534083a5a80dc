import type { BaseRecord, EntityDef } from '#shared/db/model.ts';
import { ConcurrentUpdateError } from '#shared/errors.ts';

/**
 * Document refresh runs ("threads", spec: States and transitions). A run is created `running` by
 * `POST /documents/{uuid}/refresh`, carried out by the document-refresh worker, and ends exactly once in one
 * of the terminal states with `completed_at` set.
 */
export const REFRESH_STATES = ['running', 'completed', 'completed_unknown_outcome', 'failed'] as const;
export type RefreshState = (typeof REFRESH_STATES)[number];

/** The agent's terminal status codes (its output's last line, `STATUS: <code>`). */
export const SKILL_STATUSES = ['completed', 'completed_no_changes', 'completed_locked', 'failed'] as const;
export type SkillStatus = (typeof SKILL_STATUSES)[number];

export interface RefreshThreadRecord extends BaseRecord {
  /** The thread uuid (answered as `thread_uuid`). */
  uuid: string;
  document_uuid: string;
  state: RefreshState;
  skill_status: SkillStatus | null;
  /** One line; null while running. */
  summary: string | null;
  started_at: string;
  completed_at: string | null;
  requested_by_uuid: string;
}

/** A run still running (the document's running claim names it). */
export type RunningThread = RefreshThreadRecord & { state: 'running' };

/** Name of the uniqueness claim a running thread holds on its document. */
export const RUNNING_CLAIM = 'document_refresh_running';

/**
 * While a run is `running` it holds a uniqueness claim on its document, taken in the transaction that
 * creates it and released by the one that ends it (the store diffs `uniques`). So at most one run per
 * document is running, two concurrent starts cannot both create one, and "the running run of this document"
 * is one GetItem on the claim.
 */
export const refreshThreadEntity: EntityDef<RefreshThreadRecord> = {
  type: 'refresh_thread',
  // A claim taken already is a start that lost the race to another: its retry reads that run again and joins it.
  uniques: (t) =>
    t.state === 'running' ? [{ name: RUNNING_CLAIM, value: t.document_uuid, onTaken: () => new ConcurrentUpdateError() }] : [],
  // A finished run can be polled for 30 days, then the table's TTL removes it (a running one holds a claim: never).
  expiresAt: (t) =>
    t.state === 'running' ? undefined : Math.floor(Date.parse(t.completed_at ?? t.updated_at) / 1000) + RUN_RECORD_TTL_DAYS * 86_400,
};

export const RUN_RECORD_TTL_DAYS = 30;

// ---------- the worker's queue and its timing (shared by the route table, the worker and staleness) ----------

export const DOCUMENT_REFRESH_QUEUE = 'document-refresh';
/** Receives of one message before it is dead-lettered; the last one records `failed` if the writer still throws. */
export const REFRESH_MAX_RECEIVES = 3;
/** The worker's Lambda timeout. One message per invocation (batch size 1): a refresh may take a minute. */
export const REFRESH_WORKER_TIMEOUT_SECONDS = 120;
/** The writer is cut off before the Lambda times out, so the worker still records the outcome (or `failed`). */
export const WRITER_TIMEOUT_MS = (REFRESH_WORKER_TIMEOUT_SECONDS - 20) * 1000;
/**
 * A run still `running` after every receive could have happened (visibility timeout = 6 x worker timeout,
 * infra/constructs/work-queue.ts) lost its message: the enqueue never happened (crash after commit) or every
 * invocation timed out. It is then ended `failed` by the next status poll or refresh start, so neither a
 * poller nor the document's running claim waits forever.
 */
export const REFRESH_STALE_AFTER_MS = REFRESH_MAX_RECEIVES * 6 * REFRESH_WORKER_TIMEOUT_SECONDS * 1000;

/** Longest summary kept (one line). */
export const SUMMARY_MAX_LENGTH = 500;
