import type { z } from 'zod';
import type { Scope } from '#shared/auth/scopes.ts';
import type { Door } from '#shared/http/doors.ts';

/** Extra needs beyond table and queues, each mapped by infra/stack.ts to one grant (or, for support:webhook, the webhook URL). */
export type Need = 'kms:sign' | 'kms:public-key' | 'bedrock:invoke' | 'support:webhook' | 'kms:webhook-secrets' | 'events:publish';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * One row of the route table. The CDK stack makes one Lambda + HTTP API route per row; the local stack
 * serves the same rows in-process; the OpenAPI document is generated from the same rows.
 */
export interface Route {
  method: HttpMethod;
  /** API Gateway path syntax: `/rest/v2/users/{id}`. */
  path: string;
  /** Repository-relative handler file exporting `handler`. One file per endpoint (goal kinds share theirs). */
  handler: string;
  auth: 'jwt' | 'public';
  /**
   * The door the request comes through (shared/http/doors.ts, docs/architecture.md "Doors"): how its credential is
   * proved, its errors' dialect, when the limiter is charged. `jwt` rows are `rest`, `scim` or `mcp` (the MCP route
   * has no gateway authorizer: its function checks the same token itself, to answer its 401 with a header the
   * authorizer cannot add; shared/mcp/token.ts); `public` rows are `public`, `push` (a data source's push secret,
   * checked by the function, metered and seeding ids like a JWT route: the limiter's defaults and the id seed key
   * are granted to it as to those) or `token` (the client credentials grant). test/unit/doors.test.ts checks
   * each row's handler is built for its door.
   */
  door: Door;
  /**
   * The OAuth scope a token needs for this route (contract section 17); every `jwt` row names one
   * (test/unit/route-scopes.test.ts). infra/ puts it in the route's authorizationScopes, so API Gateway refuses
   * first; the function checks it again (shared/http/middleware/scope-check.ts), locally the only check.
   */
  scope?: Scope;
  /** A public route that meters its callers against the limiter (the token endpoint): gets the limiter's defaults as jwt routes do. */
  rateLimited?: boolean;
  /**
   * The record kind the row serves, when one handler file serves several rows of different kinds (the goal
   * kinds): the handler reads it from its row (`recordKindOf`), never from the path.
   */
  record?: string;
  /**
   * The handler pages with the list engine, which signs each `pagy.next_cursor` with the id-seed key (contract
   * 18), though the row is not a documented list (`doc.list`: SCIM's lists take their own query parameters):
   * it gets that key as list rows do. Without it a page with a next page fails deployed (no key to sign with).
   */
  listEngine?: true;
  /** Table access the function needs: `read` (get/query) or `write` (read + write); `none` for no table access. */
  table: 'none' | 'read' | 'write';
  /** Queues the function sends to (names of the `workers` gathered in shared/routes/index.ts). */
  sendsTo?: string[];
  /** Extra IAM needs, spelled out so infra grants exactly these (e.g. `kms:sign`). */
  needs?: Need[];
  /**
   * Media types of a request body the route takes (default `['application/json']`); any other is 415
   * (shared/http/transport.ts). A non-JSON type reaches the handler as `rawBody` text. JSON is always one of
   * them (the type says so): the transport reads a JSON body without looking the row up.
   */
  accepts?: ['application/json', ...string[]];
  /** Repository-relative files the handler reads at run time (shared/docs/bundled-file.ts): copied into this function's bundle only. */
  bundleFiles?: string[];
  doc: {
    summary: string;
    tag: string;
    /** Marked `x-extension: true` in OpenAPI: endpoints the contract adds to the spec (contract section 8). */
    extension?: boolean;
    body?: z.ZodType;
    /** The request body's one media type when it is not JSON (the token endpoint's form). */
    bodyMediaType?: string;
    /** Refusals documented with their own schema (the token endpoint answers RFC 6749's, not the contract's shape). */
    refusals?: Array<{ status: number; description: string; schema: z.ZodType }>;
    /** Success status and response schema. */
    success: {
      status: number;
      schema?: z.ZodType;
      description?: string /** Media type of the success body when not JSON (e.g. `image/svg+xml`). */;
      contentType?: string;
    };
    /** Other success statuses answered with the same schema (e.g. 200 when a create finds the record already there). */
    alsoSuccess?: Array<{ status: number; description: string }>;
    /** Documented list endpoint (adds the common list parameters). */
    list?: boolean;
    /** The query parameters, for an endpoint whose parameters are not the common list ones. */
    query?: z.ZodObject;
  };
}

/** A queue consumer: one Lambda behind an SQS queue (locally, an in-process poller with SQS semantics). */
export interface Worker {
  queue: string;
  handler: string;
  /** Receives before a message goes to the dead-letter queue. */
  maxReceiveCount: number;
  batchSize: number;
  timeoutSeconds: number;
  table: 'none' | 'read' | 'write';
  sendsEmail?: boolean;
  sendsTo?: string[];
  needs?: Need[];
  /**
   * Most batches at once (the SQS event source's maximum concurrency, 2 to 1000; the local queue runs as many):
   * every worker gets a bounded share of the account's Lambda concurrency and the table, whoever floods its queue.
   * docs/deploy.md "Worker concurrency" says each row's value and why.
   */
  maxConcurrency: number;
  /**
   * Seconds the event source may wait to fill a batch (its maximum batching window, 0 to 300) when fewer than
   * `batchSize` messages are ready; the local queue waits the same. Absent: a batch leaves with what is ready.
   */
  batchWindowSeconds?: number;
  /** Meters its work against the tenant's rate limit: gets the limiter's service defaults (TENANT_RATE_LIMIT_*) as routes do. */
  rateLimited?: boolean;
}

/**
 * A consumer of the table's change stream: a Lambda on the DynamoDB stream in AWS (infra/stack.ts), the stream
 * poller on the local stack (scripts/lib/stream-poller.ts). Rows in shared/routes/stream.ts.
 */
export interface StreamConsumer {
  /** Names its function (`StreamProcessor`), its grant and its local checkpoint. */
  name: string;
  handler: string;
  description: string;
  table: 'read' | 'write';
  /** Every queue a projection hands work to. */
  sendsTo: string[];
  needs: Need[];
  batchSize: number;
  /** The event source delivers only changes of items with these sort keys (an event filter in AWS, the poller locally). */
  sortKeys: string[];
  timeoutSeconds: number;
  /** Deliveries of a failing record before it goes to the on-failure destination (the batch bisected on each error). */
  retryAttempts: number;
}

/**
 * A function run on a schedule: an EventBridge rule every `everyMinutes` in AWS (infra/stack.ts), a timer on the
 * local stack (scripts/lib/local-stack.ts; `localEveryMsEnv` overrides its period there, 0 turns it off). Its table
 * access is one Query of one index's partitions by leading-key prefix (`reads`), never a tenant's items: a sweep
 * reads what is due across tenants and hands each to a queue, whose worker acts as the tenant.
 */
export interface Schedule {
  /** Names its function and rule (`DataSourceSweep`). */
  name: string;
  handler: string;
  description: string;
  everyMinutes: number;
  timeoutSeconds: number;
  /** The index partitions it may Query: `index` with partition keys starting `leadingKeyPrefix`. */
  reads: { index: 'GSI1'; leadingKeyPrefix: string };
  /** Queues it sends to (names of worker rows); the stack builds the schedule only where every one has its worker. */
  sendsTo: string[];
  /** Why a missed run loses nothing (the rule's retries are its only redelivery: no dead-letter queue). */
  missedRun: string;
  /** The environment variable that sets the local timer's period in ms (0: off). */
  localEveryMsEnv: string;
}

/**
 * The record kind of the row that `routeKey` (`GET /rest/v2/key_results/{id}`) names among `rows`: the rows a
 * shared handler serves. A key outside them is a wiring mistake, not a client's: it throws.
 */
export function recordKindOf<K extends string>(rows: ReadonlyArray<Pick<Route, 'method' | 'path' | 'record'>>, routeKey: string): K {
  const row = rows.find((r) => `${r.method} ${r.path}` === routeKey);
  if (!row?.record) throw new Error(`Route ${routeKey} names no record kind in its rows`);
  return row.record as K;
}

/**
 * The table access a row's function gets: its `table`, except that every authenticated function reads (the
 * caller's user record, before the handler runs) whatever its row says. infra/ grants this; the local stack enforces it.
 */
export function tableAccessOf(r: Pick<Route, 'table' | 'auth'>): 'none' | 'read' | 'write' {
  if (r.table === 'none') return r.auth === 'jwt' ? 'read' : 'none';
  return r.table;
}
