import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdirSync, writeFileSync, appendFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { fileIssuer, type Issuer } from '#shared/auth/issuer.ts';
import { freezeObjectPrototype } from '#shared/freeze-prototype.ts';
import { LocalQueues, installLocalQueues } from '#shared/queue/queue.ts';
import { routes, schedules, streamConsumers, workers, type Route } from '#shared/routes/index.ts';
import { tableAccessOf } from '#shared/routes/types.ts';
import { layerClients } from '#shared/db/client.ts';
import type { Grant } from '#shared/function-grant.ts';
import { requireQueueSend, withGrant } from '#shared/grants.ts';
import { scopesOfClaim } from '#shared/auth/scopes.ts';
import { withContextValue } from '#shared/request-context.ts';
import type { ApiEvent, ApiResult } from '#shared/http/api.ts';
import { ensureTable, startDynamoLocal, type DynamoLocal } from './dynamodb-local.ts';
import { awsFaithfulLayer, faithfulCountsFile, faithfulSettings, writeFaithfulCounts, type FaithfulCounts } from './aws-faithful.ts';
import { registerWorkers, startSchedules, streamPoller } from './local-entry-points.ts';
import { writeStackStats } from './stack-stats.ts';

/**
 * The local stack: DynamoDB Local + every route of the route table served over HTTP, each request turned
 * into an API Gateway HTTP API (payload 2.0) event for the same handler the Lambda runs, behind a JWT check
 * that behaves like the HTTP API JWT authorizer (RSA signatures against the issuer's JWKS, kid, iss, aud, exp,
 * nbf, iat; a refusal is API Gateway's own 401 body and WWW-Authenticate header). Workers run in-process behind LocalQueues.
 */

/**
 * Tokens this stack has verified, with their claims, until they expire: a token's signature, issuer and
 * audience do not change, so the RSA check (a tenth of a GET's CPU under load) runs once per token.
 */
const verifiedTokens = new Map<string, { claims: Record<string, string>; exp: number }>();
function rememberToken(token: string, claims: Record<string, string>, exp: number): void {
  verifiedTokens.set(token, { claims, exp });
  if (verifiedTokens.size > 10_000) verifiedTokens.delete(verifiedTokens.keys().next().value!);
}

export interface LocalStackOptions {
  port?: number;
  host?: string;
  dataDir: string;
  inMemory?: boolean;
  dynamoPort?: number;
  tableName?: string;
  quiet?: boolean;
  /** A DynamoDB Local already running (and seeded) to serve instead of starting one; the stack stops it. */
  dynamo?: DynamoLocal;
  /**
   * Behave as DynamoDB in AWS may (scripts/lib/aws-faithful.ts): stale eventually consistent reads and index
   * queries (AWS_FAITHFUL_STALE_MS), faults at a rate (AWS_FAITHFUL_FAULT_RATE).
   */
  awsFaithful?: boolean;
}

export interface LocalStack {
  url: string;
  dynamoEndpoint: string;
  tableName: string;
  issuer: Issuer;
  queues: LocalQueues;
  /** How the change stream kept up: records delivered, the longest wait from commit to delivery (of it, read but waiting for a lane). */
  streamStats(): {
    delivered: number;
    maxLagMs: number;
    maxLagAt: string;
    maxLagQueuedMs: number;
    pollFailures: number;
    lastPollFailure: string;
  };
  /** Resolves once the change stream has caught up (derived state converged; StreamPoller.whenIdle). */
  streamIdle(): Promise<void>;
  /** What the AWS-faithful layer did (undefined: the stack runs without it); also in DATA_DIR/aws-faithful-counts.<pid>.json. */
  faithfulCounts(): FaithfulCounts | undefined;
  stop(): Promise<void>;
}

/** The local gateway's header limit (API Gateway's is 10 KiB); the handlers refuse above 8 KiB in the contract's shape first. */
export const LOCAL_MAX_HEADER_BYTES = 16 * 1024;

/** An error in the contract's shape (contract section 1), for what the local gateway refuses itself. */
/** API Gateway HTTP API's largest request body (its quota: 10 MB). */
const GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024;

const gatewayError = (status: number, code: string, message: string, requestId: string) =>
  JSON.stringify({ error: { status, code, message, details: [], request_id: requestId } });

const ROOT = resolve(import.meta.dirname, '..', '..');

export const stackFile = (dataDir: string) => join(dataDir, 'stack.json');
export const keyFile = (dataDir: string) => join(dataDir, 'issuer-key.json');

interface CompiledRoute {
  route: Route;
  regex: RegExp;
  params: string[];
}

/**
 * The claims as the HTTP API JWT authorizer hands them to the function: every value a string (numbers and
 * booleans too, e.g. `"exp": "1700000000"`), an array as `[a b]`, an object as its JSON.
 */
export function authorizerClaims(payload: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(payload).map(([k, v]) => [
      k,
      Array.isArray(v) ? `[${v.join(' ')}]` : v !== null && typeof v === 'object' ? JSON.stringify(v) : String(v),
    ]),
  );
}

/** A path segment percent-decoded, or as sent when it is not valid percent-encoding (the handler then answers, e.g. 404). */
const decodeSegment = (raw: string) => {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
};

function compile(route: Route): CompiledRoute {
  const params: string[] = [];
  const pattern = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{(\w+)\\?\}|\{(\w+)\}/g, (_m, a, b) => {
    params.push(a ?? b);
    return '([^/]+)';
  });
  return { route, regex: new RegExp(`^${pattern}$`), params };
}

export async function startLocalStack(opts: LocalStackOptions): Promise<LocalStack> {
  // as every deployed function does at init (infra/constructs/service-bundling.ts): no request changes what every
  // object of this process inherits. The tamed freeze keeps assignments such as `obj.toString = f` working, so
  // the process hosting the stack (vitest's global setup, a bench) is unaffected (shared/freeze-prototype.ts).
  freezeObjectPrototype();
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const log = (msg: string, extra: Record<string, unknown> = {}) => {
    if (!opts.quiet)
      console.log(JSON.stringify({ level: 'INFO', timestamp: new Date().toISOString(), service: 'local-stack', message: msg, ...extra }));
  };
  const tableName = opts.tableName ?? 'goal-tracking';
  const dynamo: DynamoLocal =
    opts.dynamo ??
    (await startDynamoLocal({ port: opts.dynamoPort, dbPath: opts.inMemory ? undefined : join(dataDir, 'dynamodb'), log: (l) => log(l) }));
  const streamArn = await ensureTable(dynamo.endpoint, tableName);

  const server: Server = createServer({ maxHeaderSize: LOCAL_MAX_HEADER_BYTES });
  // Idle kept-alive connections stay open past a client's own idle time (Node's 5 s default made a client that
  // paused under load reuse a socket the server was closing: "other side closed"), as a load balancer's do.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  // Headers beyond the server's limit never reach a handler: answer 431 in the contract's shape, as the service does.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    if (err.code === 'HPE_HEADER_OVERFLOW') {
      const body = gatewayError(431, 'headers_too_large', `Request headers are larger than ${LOCAL_MAX_HEADER_BYTES} bytes`, randomUUID());
      socket.end(
        `HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
      return;
    }
    socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject); // e.g. EADDRINUSE: stop DynamoDB Local and report, rather than crash with it running
      server.listen(opts.port ?? 3000, opts.host ?? '127.0.0.1', () => resolve());
    });
  } catch (err) {
    await dynamo.stop();
    throw new Error(`Cannot listen on ${opts.host ?? '127.0.0.1'}:${opts.port ?? 3000}: ${(err as Error).message}`);
  }
  const { port } = server.address() as { port: number };
  const url = `http://${opts.host ?? '127.0.0.1'}:${port}`;

  // The handlers read their configuration from the environment, as in Lambda.
  Object.assign(process.env, {
    TABLE_NAME: tableName,
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
    ISSUER_URL: process.env.ISSUER_URL ?? url,
    // the name the service gives itself (MCP resource, SCIM meta.location): its own URL, or one set in front of it
    API_BASE_URL: process.env.API_BASE_URL ?? url,
    ISSUER_KEY_FILE: keyFile(dataDir),
    EMAIL_OUTBOX_DIR: join(dataDir, 'outbox'),
    EXPOSE_DB_METRICS: process.env.EXPOSE_DB_METRICS ?? 'true',
    // Webhooks may target a receiver on this machine (http on 127.0.0.1/localhost); never set in AWS.
    WEBHOOK_ALLOW_LOCAL_HTTP: 'true',
    // No EMF metric lines locally (shared/observability/metrics.ts); POWERTOOLS_METRICS_DISABLED=false shows them.
    POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
    ...(opts.quiet ? { POWERTOOLS_LOG_LEVEL: 'SILENT', LOG_LEVEL: 'SILENT' } : {}),
  });
  // before any handler builds its client: every client the service builds in this process gets the layer
  const faithful = opts.awsFaithful ? faithfulSettings() : undefined;
  const layer = faithful && awsFaithfulLayer({ ...faithful, endpoint: dynamo.endpoint });
  layerClients(layer);
  if (faithful) log('AWS-faithful mode', faithful);
  // its counts in a file too, every second and at the stop, for a run that starts the stack as a process (chaos)
  const saveCounts = () => layer && writeFaithfulCounts(faithfulCountsFile(dataDir), layer.counts);
  const countsTimer = layer ? setInterval(saveCounts, 1000) : undefined;
  countsTimer?.unref();
  const issuer = await fileIssuer(keyFile(dataDir), process.env.ISSUER_URL!, process.env.JWT_AUDIENCE || undefined);
  const jwks = createLocalJWKSet(await issuer.jwks());

  const dlqFile = join(dataDir, 'dead-letters.jsonl');
  // Messages live in DATA_DIR/queues (a kill loses none), except for a throwaway in-memory stack.
  // Each handler runs inside its row's grant (shared/grants.ts): table access and queues as CDK grants them, so
  // a handler doing what its row does not declare fails here as it would in AWS.
  const queues = new LocalQueues({
    log: (m, e) => log(m, e),
    onDeadLetter: (d) => appendFileSync(dlqFile, `${JSON.stringify(d)}\n`),
    dir: join(dataDir, 'queues'),
    beforeSend: requireQueueSend,
  });
  installLocalQueues(queues);
  const handlers = new Map<string, Promise<(e: unknown, c: Context) => Promise<unknown>>>();
  const load = (file: string) => {
    if (!handlers.has(file))
      handlers.set(
        file,
        import(pathToFileURL(join(ROOT, file)).href).then((m) => m.handler),
      );
    return handlers.get(file)!;
  };
  // Every entry point from its row, as the CDK stack makes them (scripts/lib/local-entry-points.ts): the workers
  // behind the queues, each row's concurrency and batch as its event source's; the schedules on timers; the change
  // stream's consumers on DynamoDB Local's stream, the same processor the Lambda runs.
  registerWorkers(queues, workers, load);
  queues.start();
  const stopSchedules = startSchedules(schedules, load, log);
  const pollers = streamConsumers.map((row) =>
    streamPoller(row, { endpoint: dynamo.endpoint, streamArn, dataDir, deadLetterFile: dlqFile, load, log }),
  );
  for (const p of pollers) p.start();
  const startedAt = Date.now();
  const stream = pollers[0]!; // the stream processor's (the first row): what the tests and the chaos run report
  // how the stream and the queues keep up, every second, for a run that started this stack as a process (chaos, soak)
  const statsTimer = setInterval(
    () =>
      writeStackStats(dataDir, {
        at: Date.now(),
        stream: { delivered: stream.delivered, maxLagMs: stream.maxLag.ms, maxLagAt: stream.maxLag.at },
        queues: queues.stats(startedAt),
      }),
    1000,
  );
  statsTimer.unref();

  const compiled = routes.map(compile);
  // Routes by method, and each route's grant, built once: a request scans only its method's routes.
  const compiledByMethod = new Map<string, CompiledRoute[]>();
  for (const c of compiled) compiledByMethod.set(c.route.method, [...(compiledByMethod.get(c.route.method) ?? []), c]);
  const grants = new Map<Route, Grant>(
    routes.map((r) => [r, { name: `${r.method} ${r.path}`, table: tableAccessOf(r), sendsTo: r.sendsTo ?? [] }]),
  );
  server.on('request', (req, res) => {
    handle(req, res).catch((err) => {
      // A handler that fails outside its error mapper, or whose module fails to load (as when a source file changes
      // under a running suite: the module first imported after the change meets the old ones already loaded), gets
      // API Gateway's bare 500, which names nothing: its trace is printed even when the stack is quiet.
      console.error(
        JSON.stringify({
          level: 'ERROR',
          timestamp: new Date().toISOString(),
          service: 'local-stack',
          message: 'local stack error',
          method: req.method,
          path: req.url,
          error: String(err?.stack ?? err),
        }),
      );
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'Internal Server Error' }));
    });
  });

  /**
   * The request body, at most the service's body limit of it: a larger body is read to its end (so the client
   * sees the answer) without being buffered. Read with listeners rather than `for await`, whose async iterator
   * costs more than the whole read of a body-less GET.
   */
  const readRequestBody = (req: IncomingMessage) =>
    new Promise<{ body: string; received: number }>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let received = 0;
      req.on('data', (c: Buffer) => {
        received += c.length;
        if (received <= GATEWAY_MAX_BODY_BYTES) chunks.push(c);
      });
      req.once('end', () => resolve({ body: chunks.length ? Buffer.concat(chunks).toString('utf8') : '', received }));
      req.once('error', reject);
      req.once('close', () => reject(new Error('request closed before its end'))); // no-op once ended
    });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const started = Date.now();
    const requestId = randomUUID();
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    const rawPath = queryAt < 0 ? url : url.slice(0, queryAt);
    const rawQueryString = queryAt < 0 ? '' : url.slice(queryAt + 1);
    const method = (req.method ?? 'GET').toUpperCase();
    const send = (status: number, headers: Record<string, string>, body: string | Buffer) => {
      headers['apigw-requestid'] = requestId;
      // With its length known (as API Gateway sends it) the answer leaves in one write: headers sent before
      // `end` without a length made it a chunked answer, written as five pieces.
      if (status !== 204 && status !== 304)
        headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.length);
      res.writeHead(status, headers);
      res.end(body);
      if (!opts.quiet) log('access', { request_id: requestId, method, path: rawPath, status, ms: Date.now() - started });
    };
    // As API Gateway: a body over its 10 MB is its own 413; a smaller one reaches the function, whose transport
    // refuses one over the service's 1 MiB (MAX_BODY_BYTES) in its door's dialect (REST, SCIM, JSON-RPC, OAuth).
    const { body, received } = await readRequestBody(req);
    if (received > GATEWAY_MAX_BODY_BYTES)
      return send(413, { 'content-type': 'application/json' }, JSON.stringify({ message: 'Request Entity Too Large' }));
    let match: { c: CompiledRoute; m: RegExpExecArray } | undefined;
    for (const c of compiledByMethod.get(method) ?? []) {
      const m = c.regex.exec(rawPath);
      if (m) {
        match = { c, m };
        break;
      }
    }
    if (!match) return send(404, { 'content-type': 'application/json' }, JSON.stringify({ message: 'Not Found' }));
    const { route, params } = match.c;

    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(',') : v;

    let claims: Record<string, string> | undefined;
    if (route.auth === 'jwt' && route.door !== 'mcp') {
      // As the HTTP API JWT authorizer: the token (alone or after `Bearer `), signature against the issuer's JWKS, iss, aud, exp (required), nbf.
      const m = /^(?:Bearer\s+)?(\S+)$/i.exec(headers.authorization ?? '');
      try {
        if (!m) throw new Error('missing token');
        const known = verifiedTokens.get(m[1]!);
        if (known && known.exp > Date.now() / 1000) claims = known.claims;
        else {
          // API Gateway verifies RSA-based algorithms only, needs a `kid` naming a JWKS key, and an `iat` in the past.
          const { payload, protectedHeader } = await jwtVerify(m[1]!, jwks, {
            issuer: issuer.issuer,
            audience: issuer.audience,
            algorithms: ['RS256', 'RS384', 'RS512'],
            requiredClaims: ['exp'],
          });
          if (!protectedHeader.kid) throw new Error('no kid');
          if (typeof payload.iat !== 'number' || payload.iat > Date.now() / 1000 + 5) throw new Error('bad iat');
          claims = authorizerClaims(payload);
          rememberToken(m[1]!, claims, payload.exp!);
        }
      } catch {
        return send(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' }, JSON.stringify({ message: 'Unauthorized' }));
      }
    }

    const pathParameters = Object.fromEntries(params.map((p, i) => [p, decodeSegment(match!.m[i + 1]!)]));
    const queryStringParameters: Record<string, string> = {};
    if (rawQueryString)
      for (const [k, v] of new URLSearchParams(rawQueryString))
        queryStringParameters[k] = k in queryStringParameters ? `${queryStringParameters[k]},${v}` : v;
    const routeKey = `${route.method} ${route.path}`;
    const now = new Date();
    const event = {
      version: '2.0',
      routeKey,
      rawPath,
      rawQueryString,
      headers,
      ...(Object.keys(queryStringParameters).length ? { queryStringParameters } : {}),
      ...(params.length ? { pathParameters } : {}),
      requestContext: {
        accountId: '000000000000',
        apiId: 'local',
        domainName: headers.host ?? '127.0.0.1',
        domainPrefix: 'local',
        http: {
          method,
          path: rawPath,
          protocol: 'HTTP/1.1',
          sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
          userAgent: headers['user-agent'] ?? '',
        },
        requestId,
        routeKey,
        stage: '$default',
        time: now.toUTCString(),
        timeEpoch: now.getTime(),
        ...(claims
          ? { authorizer: { principalId: '', integrationLatency: 0, jwt: { claims, scopes: [...scopesOfClaim(claims.scope)] } } }
          : {}),
      },
      ...(body ? { body } : {}),
      isBase64Encoded: false,
    } as unknown as ApiEvent;
    const context = {
      awsRequestId: requestId,
      functionName: routeKey,
      functionVersion: '$LATEST',
      invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${routeKey}`,
      memoryLimitInMB: '1024',
      logGroupName: 'local',
      logStreamName: 'local',
      callbackWaitsForEmptyEventLoop: true,
      getRemainingTimeInMillis: () => 29_000,
      done: () => undefined,
      fail: () => undefined,
      succeed: () => undefined,
    } as unknown as Context;
    const handler = await load(route.handler);
    // The route's scope reaches its scopeCheck as ROUTE_SCOPE does deployed (every route shares this process's environment).
    const result = (await withContextValue('routeScope', route.scope, () =>
      withGrant(grants.get(route)!, () => handler(event, context)),
    )) as ApiResult;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(result.headers ?? {})) out[k] = String(v);
    // As API Gateway: a base64-encoded body (binary or compressed) goes out decoded.
    const responseBody = typeof result.body !== 'string' ? '' : result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body;
    send(result.statusCode ?? 200, out, responseBody);
  }

  writeFileSync(
    stackFile(dataDir),
    JSON.stringify({ url, dynamoEndpoint: dynamo.endpoint, tableName, issuer: issuer.issuer, pid: process.pid }, null, 2),
  );
  log(`Goal-tracking API listening on ${url}`);

  return {
    streamStats: () => ({
      delivered: stream.delivered,
      maxLagMs: stream.maxLag.ms,
      maxLagAt: stream.maxLag.at,
      maxLagQueuedMs: stream.maxLag.queuedMs,
      pollFailures: stream.pollFailures.count,
      lastPollFailure: stream.pollFailures.last,
    }),
    streamIdle: () => Promise.all(pollers.map((p) => p.whenIdle())).then(() => undefined),
    faithfulCounts: () => layer?.counts,
    url,
    dynamoEndpoint: dynamo.endpoint,
    tableName,
    issuer,
    queues,
    stop: async () => {
      stopSchedules();
      clearInterval(statsTimer);
      if (countsTimer) clearInterval(countsTimer);
      queues.stop();
      for (const p of pollers) await p.stop();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
      saveCounts();
      await dynamo.stop();
      layerClients(undefined);
      rmSync(stackFile(dataDir), { force: true });
    },
  };
}
