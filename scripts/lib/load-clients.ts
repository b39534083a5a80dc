/**
 * The clients of `npm run load`, in a worker thread of their own: the local stack under test keeps the main
 * thread (as a deployed service would not share its CPU with its callers), and the raw DynamoDB calls it is
 * compared with run from here too, through the same kind of client loop. The main thread posts
 * `{ scenario, clients, seconds }`; this answers with the measured `LoadResult`.
 */
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';

export interface LoadSetup {
  url: string;
  /** The floor: a bare HTTP server in the stack's thread answering each request with one GetItem of the goal. */
  floorUrl: string;
  token: string;
  goalId: string;
  keyResultIds: string[];
  dynamoEndpoint: string;
  tableName: string;
  goalKey: Record<string, string>;
  listPartition: string;
  maxRequests: number;
}

export interface LoadResult {
  name: string;
  clients: number;
  /** 2xx answers (their latencies are the percentiles'). */
  requests: number;
  /** Other answers and failed calls: not in requests, the rate or the percentiles. */
  errors: number;
  /** 2xx answers per second. */
  perSecond: number;
  /** How long the row ran, in s. */
  elapsed: number;
  /** This thread's CPU time over the row, in µs: what the load generator itself cost. */
  clientCpuMicros: number;
  /** The 2xx answers' latencies in ms (the main thread merges a row's rounds and takes the percentiles). */
  latencies: number[];
}

export const SCENARIOS = [
  'raw DynamoDB Local GetItem',
  'raw DynamoDB Local Query (21 keys)',
  'floor: bare HTTP server + GetItem',
  'GET goal',
  'list page (20)',
  'filtered list (label)',
  'check-in',
] as const;
export type Scenario = (typeof SCENARIOS)[number];

const setup = workerData as LoadSetup;
const raw = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    region: 'us-east-1',
    endpoint: setup.dynamoEndpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  }),
);

// node:http with kept-alive connections rather than fetch: fetch costs this thread 2-3 times the CPU per
// request, CPU the stack under test then lacks on a small machine (the raw calls' SDK client is as lean as it gets).
const agent = new Agent({ keepAlive: true, maxSockets: 64 });
const http = (method: string, path: string, body?: unknown, base = setup.url) =>
  new Promise<boolean>((resolve, reject) => {
    const payload = body ? JSON.stringify(body) : undefined;
    const req = request(
      `${base}${path}`,
      {
        method,
        agent,
        headers: {
          authorization: `Bearer ${setup.token}`,
          // a POST carries an Idempotency-Key, as the contract's clients send one
          ...(method === 'POST' ? { 'idempotency-key': randomUUID() } : {}),
          ...(payload ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) } : {}),
        },
      },
      (res) => {
        res.on('data', () => undefined);
        res.on('end', () => resolve((res.statusCode ?? 500) < 300));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });

const ops: Record<Scenario, (client: number, i: number) => Promise<boolean>> = {
  'raw DynamoDB Local GetItem': () => raw.send(new GetCommand({ TableName: setup.tableName, Key: setup.goalKey })).then((o) => !!o.Item),
  'raw DynamoDB Local Query (21 keys)': () =>
    raw
      .send(
        new QueryCommand({
          TableName: setup.tableName,
          IndexName: 'GSI1',
          KeyConditionExpression: 'GSI1PK = :p',
          ExpressionAttributeValues: { ':p': setup.listPartition },
          Limit: 21,
        }),
      )
      .then((o) => (o.Count ?? 0) > 0),
  'floor: bare HTTP server + GetItem': () => http('GET', '/', undefined, setup.floorUrl),
  'GET goal': () => http('GET', `/rest/v2/objectives/${setup.goalId}`),
  'list page (20)': () => http('GET', '/rest/v2/objectives'),
  'filtered list (label)': () => http('GET', '/rest/v2/objectives?q[labels_name_eq]=l1'),
  // each client checks in on its own key result
  'check-in': (client, i) =>
    http('POST', '/rest/v2/checkins', { goal_uuid: setup.keyResultIds[client % setup.keyResultIds.length], value: i % 100 }),
};

/** `clients` loops calling the scenario until `seconds` or the request count is used up. */
async function measure(name: Scenario, clients: number, seconds: number): Promise<LoadResult> {
  const op = ops[name];
  if (!(await op(0, 0))) throw new Error(`${name}: the warm-up call failed`);
  const latencies: number[] = [];
  let errors = 0;
  let issued = 0;
  const cpuBefore = process.threadCpuUsage();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (performance.now() < deadline && issued < setup.maxRequests) {
        const i = issued++;
        const t0 = performance.now();
        const ok = await op(client, i).catch(() => false);
        // only 2xx answers count: a refused or failed request is fast and would flatter the rate
        if (ok) latencies.push(performance.now() - t0);
        else errors++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.threadCpuUsage(cpuBefore);
  return {
    name,
    clients,
    requests: latencies.length,
    errors,
    perSecond: latencies.length / elapsed,
    elapsed,
    clientCpuMicros: cpu.user + cpu.system,
    latencies,
  };
}

parentPort?.on('message', (m: { scenario: Scenario; clients: number; seconds: number }) => {
  measure(m.scenario, m.clients, m.seconds).then(
    (result) => parentPort!.postMessage({ result }),
    (err: Error) => parentPort!.postMessage({ error: err.message }),
  );
});
