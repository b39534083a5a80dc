import {
  IMPORT_MAX_RECEIVES,
  IMPORT_MEDIA_TYPES,
  IMPORT_QUEUE,
  IMPORT_WORKER_CONCURRENCY,
  IMPORT_WORKER_TIMEOUT_SECONDS,
} from '#shared/domain/imports/entity.ts';
import type { Route, Worker } from '#shared/routes/types.ts';
import { ImportBody, ImportListResponse, ImportResponse } from '#shared/schemas/imports.ts';

const tag = 'imports';

/** Bulk import of goals (contract 13). */
export const importRoutes: Route[] = [
  {
    method: 'POST',
    path: '/rest/v2/imports',
    handler: 'functions/imports/create.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'goals:write',
    table: 'write',
    sendsTo: [IMPORT_QUEUE],
    accepts: IMPORT_MEDIA_TYPES,
    doc: {
      summary:
        "Import goals in bulk (JSON or CSV, up to 10,000 rows; members and admins). All or nothing: validated whole first, then created by a worker; poll the import until state is succeeded or failed. Rows are created no faster than the tenant's rate limit allows (each costs the importing user a token, as a create would). At most 2 imports of a tenant queued or running: another is 429 rate_limited (detail imports_in_flight) with Retry-After. The body is at most 1 MB like any other (413 payload_too_large): 10,000 rows fit as CSV of about 100 bytes a row, while JSON rows of a typical shape (about 170 bytes, more with a metric) fit about 6,000; split a larger file into several imports",
      tag,
      extension: true,
      body: ImportBody,
      success: { status: 202, schema: ImportResponse },
    },
  },
  {
    method: 'GET',
    path: '/rest/v2/imports',
    handler: 'functions/imports/list.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'goals:read',
    table: 'read',
    doc: {
      summary:
        "List imports, oldest first: the caller's own (every import of the tenant for admins). Filters: uuid, state, creator_uuid, created_at",
      tag,
      extension: true,
      list: true,
      success: { status: 200, schema: ImportListResponse },
    },
  },
  {
    method: 'GET',
    path: '/rest/v2/imports/{id}',
    handler: 'functions/imports/get.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'goals:read',
    table: 'read',
    doc: {
      summary:
        'An import and its progress (its creator and admins): state, done of total, every error, created (ref → goal uuid) once succeeded',
      tag,
      extension: true,
      success: { status: 200, schema: ImportResponse },
    },
  },
];

export const importWorkers: Worker[] = [
  // One import per invocation: up to 10,000 goals at the tenant's rate limit, continued by a delayed message of its
  // own queue when it must wait or runs out of time; a bounded number at once, across tenants.
  {
    queue: IMPORT_QUEUE,
    handler: 'functions/workers/import-goals.ts',
    maxReceiveCount: IMPORT_MAX_RECEIVES,
    batchSize: 1,
    timeoutSeconds: IMPORT_WORKER_TIMEOUT_SECONDS,
    table: 'write',
    sendsTo: [IMPORT_QUEUE],
    maxConcurrency: IMPORT_WORKER_CONCURRENCY,
    rateLimited: true,
  },
];
