import { DOCUMENT_REFRESH_QUEUE, REFRESH_MAX_RECEIVES, REFRESH_WORKER_TIMEOUT_SECONDS } from '#shared/domain/documents/entity.ts';
import type { Route, Worker } from '#shared/routes/types.ts';
import { DocumentListResponse, RefreshStartBody, RefreshStartResponse, RefreshStatusResponse } from '#shared/schemas/documents.ts';

const tag = 'documents';

/**
 * Documents are shareable resources (create, get and grants are in shared/routes/sharing.ts). The refresh
 * path names its parameter `{shareable_uuid}` like the sibling `/documents/{shareable_uuid}/...` rows: API
 * Gateway refuses two names for one path position.
 */
export const documentRoutes: Route[] = [
  {
    method: 'GET',
    path: '/documents',
    handler: 'functions/documents/list.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'goals:read',
    table: 'read',
    doc: {
      summary:
        'List the documents the caller can see: owned, granted, or every document for admins. Filters: uuid, title, owner_uuid, created_at, updated_at',
      tag,
      list: true,
      success: { status: 200, schema: DocumentListResponse },
    },
  },
  {
    method: 'POST',
    path: '/documents/{shareable_uuid}/refresh',
    handler: 'functions/documents/refresh.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'goals:write',
    table: 'write',
    sendsTo: [DOCUMENT_REFRESH_QUEUE],
    doc: {
      summary:
        "Start an on-demand refresh of a document (edit access: owner, admins, edit or manage grant; not viewers). While a refresh of the document runs, answers that run's thread_uuid (already_running: true) instead of starting another",
      tag,
      extension: true,
      body: RefreshStartBody,
      success: { status: 202, schema: RefreshStartResponse },
    },
  },
  {
    method: 'GET',
    path: '/chat/refresh_threads/{thread_uuid}/status',
    handler: 'functions/documents/refresh-status.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'goals:read',
    // A run whose message was lost is ended `failed` by the poll that finds it stale (a conditional write).
    table: 'write',
    doc: {
      summary:
        "Status of a document refresh run; the thread uuid is the access proof within the tenant (another tenant's: 404). Poll until state is not running (typically 10-60 s)",
      tag,
      success: { status: 200, schema: RefreshStatusResponse },
    },
  },
];

export const documentWorkers: Worker[] = [
  // The refresh agent: one run per invocation (a writer call may take a minute); writes the run's outcome and the refreshed content.
  {
    queue: DOCUMENT_REFRESH_QUEUE,
    handler: 'functions/workers/document-refresh.ts',
    maxReceiveCount: REFRESH_MAX_RECEIVES,
    batchSize: 1,
    timeoutSeconds: REFRESH_WORKER_TIMEOUT_SECONDS,
    table: 'write',
    needs: ['bedrock:invoke'],
    // each run holds a writer call of up to a minute: a few at once, within Bedrock's on-demand quota for one model
    maxConcurrency: 5,
  },
];
