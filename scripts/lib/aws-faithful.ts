import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { type AttributeValue, BatchGetItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { TABLE_DEFINITION } from '#shared/db/table.ts';

/**
 * The local stack's AWS-faithful mode (`scripts/dev start --aws-faithful`, AWS_FAITHFUL=1 for the test suites):
 * a layer on every DynamoDB client the service builds in the local stack's process, never in a Lambda
 * (shared/db/client.ts layerClients; the stack installs it). DynamoDB Local reads strongly consistent and never
 * fails; AWS does neither, so here:
 *  - an eventually consistent GetItem/BatchGetItem/Query (ConsistentRead not true) and every index Query answers
 *    the state the items had `staleMs` ago, from the versions this process wrote (each write's old image, kept
 *    that long): a new item is "not there yet", a deleted one "still there", a changed one as it was;
 *  - `faultRate` of the HTTP attempts fail as AWS answers them (ProvisionedThroughputExceededException,
 *    ThrottlingException, InternalServerError; a write's InternalServerError also after the write took effect,
 *    so the retry meets its own write; for transactions TransactionCanceledException with a TransactionConflict
 *    reason): injected below the SDK's retry middleware, so the client's own retry strategy (the one deployed)
 *    retries what it would retry in AWS;
 *  - `faultRate` of the BatchGetItem calls of two keys or more answer part of the keys and return the rest as
 *    `UnprocessedKeys` (AWS does so under throttling: "at least one item processed");
 *  - a single-item write (PutItem, UpdateItem, DeleteItem) of an item a transaction is writing at that moment
 *    fails with TransactionConflictException, as AWS documents ("Transaction conflict handling"): a single-item
 *    write can get no other conflict (nor a failed condition it did not ask for), only these collisions and the
 *    throttling and internal errors above. Faults of every kind are off at `faultRate` 0.
 * The layer counts what it did (`counts`: faults injected by kind and call, stale reads served by call), and
 * the lanes that run in this mode assert those counts (test/setup/global.ts, scripts/chaos.ts): a layer left
 * unwired fails them.
 */
interface FaithfulOptions {
  /** How old an eventually consistent answer is (0: none is stale). */
  staleMs: number;
  /** The fraction of HTTP attempts that fail (0: none). */
  faultRate: number;
  /** DynamoDB Local, for the strongly consistent read of a write's old images. */
  endpoint: string;
  random?: () => number;
  /** The clock the window is measured by (a test moves it). */
  now?: () => number;
}

const number = (name: string, fallback: number) => {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number >= 0 (got ${raw})`);
  return value;
};

/** The mode's settings from the environment: AWS_FAITHFUL_STALE_MS (default 1000), AWS_FAITHFUL_FAULT_RATE (default 0.02). */
export const faithfulSettings = () => ({
  staleMs: number('AWS_FAITHFUL_STALE_MS', 1000),
  faultRate: Math.min(1, number('AWS_FAITHFUL_FAULT_RATE', 0.02)),
});

type Item = Record<string, AttributeValue>;
type Input = Record<string, unknown>;
type Output = Record<string, unknown>;

const keyOf = (item: Item) => `${item.PK?.S}\u0000${item.SK?.S}`;
const tableKey = (item: Item): Item => ({ PK: item.PK!, SK: item.SK! });

interface Version {
  key: string;
  /** When the write that replaced `old` returned. */
  at: number;
  old: Item | undefined;
}

/** The old image of every write this process made in the last `keepMs`, by key and in time order. */
class Versions {
  private log: Version[] = [];
  private head = 0;
  private byKey = new Map<string, Version[]>();

  constructor(private readonly keepMs: number) {}

  record(key: string, at: number, old: Item | undefined): void {
    const v = { key, at, old };
    this.log.push(v);
    const list = this.byKey.get(key);
    if (list) list.push(v);
    else this.byKey.set(key, [v]);
    this.prune(at);
  }

  private prune(now: number): void {
    while (this.head < this.log.length && this.log[this.head]!.at < now - this.keepMs) {
      const v = this.log[this.head++]!;
      const list = this.byKey.get(v.key)!;
      list.shift();
      if (!list.length) this.byKey.delete(v.key);
    }
    if (this.head > 1024 && this.head * 2 > this.log.length) {
      this.log = this.log.slice(this.head);
      this.head = 0;
    }
  }

  /** The item's state at `t` when a write changed it since (`{ item }`, undefined item: absent then), or undefined: unchanged since. */
  stateAt(key: string, t: number): { item: Item | undefined } | undefined {
    const first = this.byKey.get(key)?.find((v) => v.at > t);
    return first && { item: first.old };
  }

  /** Every key written after `t`, with its state at `t`. */
  *changedAfter(t: number): Generator<[string, Item | undefined]> {
    const seen = new Set<string>();
    for (let i = this.log.length - 1; i >= this.head && this.log[i]!.at > t; i--) seen.add(this.log[i]!.key);
    for (const key of seen) yield [key, this.stateAt(key, t)!.item];
  }
}

/** A key condition as the store writes them: `pk = :v` and optionally one sort-key condition. */
interface KeyCondition {
  pk: [string, string];
  sk?: { name: string; op: string; values: string[] };
}

function parseKeyCondition(input: Input): KeyCondition {
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Item;
  const name = (token: string) => names[token] ?? token;
  const value = (token: string) => {
    const v = values[token.trim()]?.S;
    if (v === undefined) throw new Error(`aws-faithful: key condition value ${token} is not a string`);
    return v;
  };
  const expr = String(input.KeyConditionExpression ?? '');
  const [pkPart, ...rest] = expr.split(/ AND /i);
  const [pkName, pkValue] = pkPart!.split('=').map((s) => s.trim());
  const cond: KeyCondition = { pk: [name(pkName!), value(pkValue!)] };
  const sk = rest.join(' AND ').trim();
  if (!sk) return cond;
  const beginsWith = /^begins_with\s*\(\s*([^,\s]+)\s*,\s*([^)\s]+)\s*\)$/i.exec(sk);
  if (beginsWith) return { ...cond, sk: { name: name(beginsWith[1]!), op: 'begins_with', values: [value(beginsWith[2]!)] } };
  const between = /^(\S+)\s+BETWEEN\s+(\S+)\s+AND\s+(\S+)$/i.exec(sk);
  if (between) return { ...cond, sk: { name: name(between[1]!), op: 'between', values: [value(between[2]!), value(between[3]!)] } };
  // `name op :value`, spaced as the store writes it
  const [skName, op, skValue, ...more] = sk.split(' ').filter(Boolean);
  if (skValue && !more.length && ['<=', '>=', '<', '>', '='].includes(op!))
    return { ...cond, sk: { name: name(skName!), op: op!, values: [value(skValue)] } };
  throw new Error(`aws-faithful: unsupported key condition ${expr}`);
}

/** DynamoDB orders string keys by their UTF-8 bytes. */
const compareBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

function matches(item: Item, cond: KeyCondition): boolean {
  if (item[cond.pk[0]]?.S !== cond.pk[1]) return false;
  if (!cond.sk) return true;
  const v = item[cond.sk.name]?.S;
  if (v === undefined) return false;
  const [a, b] = cond.sk.values as [string, string];
  switch (cond.sk.op) {
    case 'begins_with':
      return v.startsWith(a);
    case 'between':
      return compareBytes(v, a) >= 0 && compareBytes(v, b) <= 0;
    case '=':
      return v === a;
    case '<':
      return compareBytes(v, a) < 0;
    case '<=':
      return compareBytes(v, a) <= 0;
    case '>':
      return compareBytes(v, a) > 0;
    default:
      return compareBytes(v, a) >= 0;
  }
}

/** The key attributes and projection of the table or of one of its indexes. */
function layoutOf(indexName: unknown): { pk: string; sk: string; project: (item: Item) => Item } {
  if (indexName === undefined) return { pk: TABLE_DEFINITION.partitionKey, sk: TABLE_DEFINITION.sortKey, project: (i) => i };
  const index = TABLE_DEFINITION.globalSecondaryIndexes.find((g) => g.indexName === indexName);
  if (!index) throw new Error(`aws-faithful: unknown index ${String(indexName)}`);
  const kept = [TABLE_DEFINITION.partitionKey, TABLE_DEFINITION.sortKey, index.partitionKey, index.sortKey, ...index.nonKeyAttributes];
  return {
    pk: index.partitionKey,
    sk: index.sortKey,
    project: (item) => Object.fromEntries(kept.filter((a) => item[a] !== undefined).map((a) => [a, item[a]!])),
  };
}

/**
 * An eventually consistent Query's answer as of `t`: changed items as they were, items written since gone, removed
 * ones back; `stale`: it differs from the current answer.
 */
function staleQuery(versions: Versions, input: Input, output: Output, t: number): { output: Output; stale: boolean } {
  const cond = parseKeyCondition(input);
  const layout = layoutOf(input.IndexName);
  const forward = input.ScanIndexForward !== false;
  // the order of the answer (index sort key, then the table key: an index's ties have no set order)
  const order = (a: Item, b: Item) =>
    (forward ? 1 : -1) *
    (compareBytes(a[layout.sk]?.S ?? '', b[layout.sk]?.S ?? '') ||
      compareBytes(a.PK?.S ?? '', b.PK?.S ?? '') ||
      compareBytes(a.SK?.S ?? '', b.SK?.S ?? ''));
  const start = input.ExclusiveStartKey as Item | undefined;
  const end = output.LastEvaluatedKey as Item | undefined;
  // only what belongs on this page: after the start key, up to the page's last key (what follows is the next page's)
  const onPage = (item: Item) => (!start || order(item, start) > 0) && (!end || order(item, end) <= 0);
  const answer: Item[] = [];
  const seen = new Set<string>();
  for (const item of (output.Items ?? []) as Item[]) {
    const key = keyOf(item);
    seen.add(key);
    const then = versions.stateAt(key, t);
    if (!then) answer.push(item);
    else if (then.item && matches(then.item, cond) && onPage(then.item)) answer.push(layout.project(then.item));
  }
  for (const [key, old] of versions.changedAfter(t))
    if (!seen.has(key) && old && matches(old, cond) && onPage(old)) answer.push(layout.project(old));
  answer.sort(order);
  const limit = input.Limit as number | undefined;
  let lastKey = end;
  if (limit !== undefined && answer.length > limit) {
    answer.length = limit;
    const last = answer[limit - 1]!;
    lastKey = Object.fromEntries(
      [...new Set([layout.pk, layout.sk, 'PK', 'SK'])].filter((a) => last[a] !== undefined).map((a) => [a, last[a]!]),
    );
  }
  const { LastEvaluatedKey: _, ...rest } = output;
  const current = new Map(((output.Items ?? []) as Item[]).map((i) => [keyOf(i), i]));
  const stale =
    answer.length !== current.size || answer.some((i) => current.get(keyOf(i)) !== i && !isDeepStrictEqual(i, current.get(keyOf(i))));
  return { output: { ...rest, Items: answer, Count: answer.length, ...(lastKey ? { LastEvaluatedKey: lastKey } : {}) }, stale };
}

/** The keys a write command changes. */
function writtenKeys(command: string, input: Input): Item[] {
  switch (command) {
    case 'PutItemCommand':
      return [tableKey(input.Item as Item)];
    case 'UpdateItemCommand':
    case 'DeleteItemCommand':
      return [input.Key as Item];
    case 'TransactWriteItemsCommand':
      return (input.TransactItems as Record<string, { Item?: Item; Key?: Item }>[]).flatMap((t) => {
        if (t.Put) return [tableKey(t.Put.Item!)];
        const k = t.Update?.Key ?? t.Delete?.Key;
        return k ? [k] : [];
      });
    case 'BatchWriteItemCommand':
      return Object.values(input.RequestItems as Record<string, { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }[]>)
        .flat()
        .map((r) => (r.PutRequest ? tableKey(r.PutRequest.Item) : r.DeleteRequest!.Key));
    default:
      return [];
  }
}

const FAULT_TYPE = 'com.amazonaws.dynamodb.v20120810#';

/** The calls that write, and of them the single-item writes (which a transaction on their item can reject). */
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'TransactWriteItemsCommand', 'BatchWriteItemCommand']);
const SINGLE_WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand']);

/** The kinds of fault the layer injects, as counted (FaithfulCounts.faults). */
export const FAULT_KINDS = {
  provisioned: 'ProvisionedThroughputExceededException',
  throttling: 'ThrottlingException',
  internal: 'InternalServerError',
  /** A write's InternalServerError after the write took effect: the SDK's retry meets its own write. */
  appliedInternal: 'InternalServerError after the write applied',
  /** A transaction cancelled with a TransactionConflict reason. */
  transactionConflict: 'TransactionCanceledException',
  /** A single-item write of an item a transaction was writing at that moment. */
  singleItemConflict: 'TransactionConflictException',
  /** A BatchGetItem that answered part of its keys, the rest as UnprocessedKeys. */
  unprocessedKeys: 'UnprocessedKeys',
} as const;

interface Fault {
  kind: string;
  status: number;
  type: string;
  body: Record<string, unknown>;
  /** The write is made first, and its answer replaced by this one. */
  applied?: boolean;
}

const PROVISIONED: Fault = {
  kind: FAULT_KINDS.provisioned,
  status: 400,
  type: 'ProvisionedThroughputExceededException',
  body: { message: 'The level of configured provisioned throughput for the table was exceeded.' },
};
const THROTTLING: Fault = {
  kind: FAULT_KINDS.throttling,
  status: 400,
  type: 'ThrottlingException',
  body: { message: 'Throughput exceeds the current capacity of your table or index.' },
};
const INTERNAL: Fault = {
  kind: FAULT_KINDS.internal,
  status: 500,
  type: 'InternalServerError',
  body: { message: 'Internal server error' },
};
const SINGLE_ITEM_CONFLICT: Fault = {
  kind: FAULT_KINDS.singleItemConflict,
  status: 400,
  type: 'TransactionConflictException',
  body: { message: 'Transaction is ongoing for the item' },
};

/** The faults an attempt of `command` may get (a transaction of `transactItems` items), the conflict last. */
function faultsFor(command: string, transactItems: number): Fault[] {
  const faults = [PROVISIONED, THROTTLING, INTERNAL];
  if (WRITES.has(command)) faults.push({ ...INTERNAL, kind: FAULT_KINDS.appliedInternal, applied: true });
  if (command === 'TransactWriteItemsCommand' && transactItems > 0) {
    const reasons = Array.from({ length: transactItems }, (_, i) =>
      i === 0 ? { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' } : { Code: 'None' },
    );
    faults.push({
      kind: FAULT_KINDS.transactionConflict,
      status: 400,
      type: 'TransactionCanceledException',
      body: {
        Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
        CancellationReasons: reasons,
      },
    });
  }
  return faults;
}

/** An error answer as DynamoDB sends it (AWS JSON 1.0), for the SDK's own deserializer. */
const errorResponse = (fault: Fault) => ({
  statusCode: fault.status,
  reason: fault.status === 500 ? 'Internal Server Error' : 'Bad Request',
  headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': randomUUID() },
  body: new TextEncoder().encode(JSON.stringify({ __type: `${FAULT_TYPE}${fault.type}`, ...fault.body })),
});

/**
 * What the layer did: the faults it injected (kind → call → how many) and, of the eventually consistent reads
 * and index queries it answered (`reads`, by call: GetItem, BatchGetItem, Query, Query (index)), those it
 * answered with state older than the latest (`stale`: a write within the window changed what they answer).
 */
export interface FaithfulCounts {
  faults: Record<string, Record<string, number>>;
  reads: Record<string, number>;
  stale: Record<string, number>;
}

const emptyCounts = (): FaithfulCounts => ({ faults: {}, reads: {}, stale: {} });
const bump = (m: Record<string, number>, k: string, n = 1) => {
  m[k] = (m[k] ?? 0) + n;
};
const sum = (m: Record<string, number>) => Object.values(m).reduce((a, b) => a + b, 0);
const callOf = (command: string) => command.replace(/Command$/, '');

/** How many faults of `kind` (every kind: undefined) the layer injected. */
const faultsInjected = (c: FaithfulCounts, kind?: string) =>
  kind === undefined ? Object.values(c.faults).reduce((a, m) => a + sum(m), 0) : sum(c.faults[kind] ?? {});
const staleReadsServed = (c: FaithfulCounts) => sum(c.stale);

/** `from` added into `into` (the counts of several stacks: chaos restarts its stack). */
function addCounts(into: FaithfulCounts, from: FaithfulCounts): FaithfulCounts {
  for (const [kind, calls] of Object.entries(from.faults))
    for (const [call, n] of Object.entries(calls)) bump((into.faults[kind] ??= {}), call, n);
  for (const [call, n] of Object.entries(from.reads)) bump(into.reads, call, n);
  for (const [call, n] of Object.entries(from.stale)) bump(into.stale, call, n);
  return into;
}

/** The counts in a line each: faults by kind and call, stale reads of the eventually consistent reads by call. */
export function describeFaithfulCounts(c: FaithfulCounts): string {
  const calls = (m: Record<string, number>) =>
    Object.entries(m)
      .sort(([, a], [, b]) => b - a)
      .map(([call, n]) => `${call} ${n}`)
      .join(', ');
  const kinds = Object.entries(c.faults)
    .sort(([, a], [, b]) => sum(b) - sum(a))
    .map(([kind, m]) => `${kind} ${sum(m)} (${calls(m)})`);
  const reads = Object.entries(c.reads)
    .sort(([, a], [, b]) => b - a)
    .map(([call, n]) => `${call} ${c.stale[call] ?? 0} of ${n}`);
  return [
    `AWS-faithful: ${faultsInjected(c)} faults injected${kinds.length ? `: ${kinds.join('; ')}` : ''}`,
    `AWS-faithful: ${staleReadsServed(c)} stale reads served of ${sum(c.reads)} eventually consistent${reads.length ? `: ${reads.join(', ')}` : ''}`,
  ].join('\n');
}

/**
 * What a run in this mode expects of the layer, from the environment as the lane set it, read here on its own
 * (not through faithfulSettings, so a layer whose settings came out 0 is not what is expected): faults unless
 * AWS_FAITHFUL_FAULT_RATE is 0, stale reads unless AWS_FAITHFUL_STALE_MS is 0.
 */
export function faithfulExpectation(env: NodeJS.ProcessEnv = process.env): { faults: boolean; stale: boolean } {
  const on = (raw: string | undefined) => raw === undefined || raw === '' || Number(raw) !== 0;
  return { faults: on(env.AWS_FAITHFUL_FAULT_RATE), stale: on(env.AWS_FAITHFUL_STALE_MS) };
}

/** Why the counts do not prove a faithful run (empty: they do): each kind that is on happened, each that is off did not. */
export function faithfulProblems(c: FaithfulCounts | undefined, expect: { faults: boolean; stale: boolean }): string[] {
  if (!c) return ['the stack runs no AWS-faithful layer'];
  const problems: string[] = [];
  const faults = faultsInjected(c);
  const stale = staleReadsServed(c);
  if (expect.faults && faults === 0) problems.push('no fault was injected, though faults are on');
  if (!expect.faults && faults > 0) problems.push(`${faults} faults were injected, though AWS_FAITHFUL_FAULT_RATE is 0`);
  if (expect.stale && stale === 0)
    problems.push(`no stale read was served (of ${sum(c.reads)} eventually consistent), though stale reads are on`);
  if (!expect.stale && stale > 0) problems.push(`${stale} stale reads were served, though AWS_FAITHFUL_STALE_MS is 0`);
  return problems;
}

/** Where a stack in this mode keeps its counts (written every second and at its stop): one file per process. */
export const faithfulCountsFile = (dataDir: string, pid = process.pid) => join(dataDir, `aws-faithful-counts.${pid}.json`);
const COUNTS_FILE = /^aws-faithful-counts\.\d+\.json$/;

export function writeFaithfulCounts(file: string, counts: FaithfulCounts): void {
  writeFileSync(`${file}.tmp`, JSON.stringify(counts));
  renameSync(`${file}.tmp`, file); // never half a file, even when the process is killed while it writes
}

/** The counts of every stack that ran on `dataDir` (chaos kills and restarts its stack), or undefined when none wrote any. */
export function readFaithfulCounts(dataDir: string): FaithfulCounts | undefined {
  const files = readdirSync(dataDir).filter((f) => COUNTS_FILE.test(f));
  if (!files.length) return undefined;
  return files.reduce((all, f) => addCounts(all, JSON.parse(readFileSync(join(dataDir, f), 'utf8')) as FaithfulCounts), emptyCounts());
}

/** How long DynamoDB answers a TransactWriteItems sent again with a token from the first one (its idempotency window). */
const TOKEN_KEPT_MS = 10 * 60_000;

/** The ClientRequestToken of a TransactWriteItems attempt (the SDK fills it once per call: every attempt has the same). */
function tokenOf(request: unknown): string | undefined {
  const body = (request as { body?: string | Uint8Array }).body;
  const text = typeof body === 'string' || body === undefined ? body : new TextDecoder().decode(body);
  return text ? (JSON.parse(text) as { ClientRequestToken?: string }).ClientRequestToken : undefined;
}

/** The layer on clients, with its counts. */
export type FaithfulLayer = ((client: DynamoDBClient) => void) & { readonly counts: FaithfulCounts };

/** What the write-recording step leaves for the fault step below it, on the call's context (shared by its attempts). */
const WRITE = Symbol('awsFaithfulWrite');
interface WriteContext {
  [WRITE]?: { keys: string[]; transactItems: number };
}

/** An error after which a write may have taken effect: a 5xx, or no answer at all. */
const mayHaveApplied = (err: unknown) => {
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return status === undefined || status >= 500;
};

type KeysAndAttributes = { Keys: Item[]; ConsistentRead?: boolean };

/** What the mode adds to one client: the stale reads and the write recording, and the faults below the retries. */
export function awsFaithfulLayer(opts: FaithfulOptions): FaithfulLayer {
  const random = opts.random ?? Math.random;
  const now = opts.now ?? Date.now;
  const versions = new Versions(opts.staleMs);
  const counts = emptyCounts();
  const fault = (kind: string, command: string) => bump((counts.faults[kind] ??= {}), callOf(command));
  /** Items transactions of this process are writing (an attempt sent, its answer not back), with how many. */
  const transacting = new Map<string, number>();
  /** The ClientRequestToken of each transaction the layer let apply and answered 500, for as long as AWS keeps one (10 min). */
  const appliedTokens = new Map<string, number>();
  const rememberApplied = (token: string) => {
    const at = now();
    appliedTokens.set(token, at);
    for (const [t, when] of appliedTokens) {
      if (when > at - TOKEN_KEPT_MS) break;
      appliedTokens.delete(t);
    }
  };
  let plain: DynamoDBClient | undefined;
  /** The current images of `keys` (strongly consistent, on a client without the layer): a write's old images. */
  const current = async (table: string, keys: Item[]): Promise<Map<string, Item>> => {
    plain ??= new DynamoDBClient({
      endpoint: opts.endpoint,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const found = new Map<string, Item>();
    const unique = [...new Map(keys.map((k) => [keyOf(k), k])).values()];
    for (let i = 0; i < unique.length; i += 100) {
      let wanted: Item[] = unique.slice(i, i + 100);
      while (wanted.length) {
        const out = await plain.send(new BatchGetItemCommand({ RequestItems: { [table]: { Keys: wanted, ConsistentRead: true } } }));
        for (const item of out.Responses?.[table] ?? []) found.set(keyOf(item), item);
        wanted = out.UnprocessedKeys?.[table]?.Keys ?? [];
      }
    }
    return found;
  };

  const tableOf = (command: string, input: Input): string | undefined => {
    if (command === 'TransactWriteItemsCommand') {
      const first = (input.TransactItems as Record<string, { TableName?: string }>[])[0];
      return first && Object.values(first)[0]?.TableName;
    }
    if (command === 'BatchWriteItemCommand' || command === 'BatchGetItemCommand') return Object.keys(input.RequestItems as object)[0];
    return input.TableName as string | undefined;
  };

  /** Every item a transaction names, its condition checks too: all of them are "in a transaction" while it runs. */
  const transactionKeys = (input: Input) =>
    (input.TransactItems as Record<string, { Item?: Item; Key?: Item }>[]).map((t) => {
      const op = Object.values(t)[0]!;
      return keyOf(op.Item ? tableKey(op.Item) : op.Key!);
    });

  /** The reads: stale within the window, and part of a BatchGetItem's keys left unprocessed at the fault rate. */
  const read = async (command: string, input: Input, args: { input: unknown }, next: (args: never) => Promise<{ output: unknown }>) => {
    let request = args;
    let held: { table: string; request: KeysAndAttributes; keys: Item[] } | undefined;
    if (command === 'BatchGetItemCommand' && opts.faultRate > 0) {
      const items = input.RequestItems as Record<string, KeysAndAttributes>;
      const [table, ...others] = Object.keys(items);
      const all = items[table!]!.Keys;
      // AWS answers a BatchGetItem none of whose keys it could read with ProvisionedThroughputExceededException
      // (the fault step's); one it read part of with the rest as UnprocessedKeys
      if (!others.length && all.length >= 2 && random() < opts.faultRate) {
        const processed = 1 + Math.floor(random() * (all.length - 1));
        held = { table: table!, request: items[table!]!, keys: all.slice(processed) };
        request = { ...args, input: { ...input, RequestItems: { [table!]: { ...items[table!]!, Keys: all.slice(0, processed) } } } };
      }
    }
    const result = await next(request as never);
    if (held) {
      const out = result.output as Output;
      const unprocessed = (out.UnprocessedKeys ?? {}) as Record<string, KeysAndAttributes>;
      result.output = {
        ...out,
        UnprocessedKeys: {
          ...unprocessed,
          [held.table]: { ...held.request, Keys: [...(unprocessed[held.table]?.Keys ?? []), ...held.keys] },
        },
      };
      fault(FAULT_KINDS.unprocessedKeys, command);
    }
    if (!opts.staleMs) return result;
    const t = now() - opts.staleMs;
    const output = result.output as Output;
    if (command === 'GetItemCommand' && !input.ConsistentRead) {
      bump(counts.reads, 'GetItem');
      const then = versions.stateAt(keyOf(input.Key as Item), t);
      if (then) {
        const { Item: _, ...rest } = output;
        result.output = { ...rest, ...(then.item ? { Item: then.item } : {}) };
        if (!isDeepStrictEqual(then.item, output.Item)) bump(counts.stale, 'GetItem');
      }
    } else if (command === 'BatchGetItemCommand') {
      const responses = { ...((output.Responses ?? {}) as Record<string, Item[]>) };
      let eventual = false;
      let stale = false;
      for (const [table, request] of Object.entries(input.RequestItems as Record<string, KeysAndAttributes>)) {
        if (request.ConsistentRead) continue;
        eventual = true;
        const unprocessed = new Set(
          ((output.UnprocessedKeys as Record<string, KeysAndAttributes> | undefined)?.[table]?.Keys ?? []).map(keyOf),
        );
        const found = new Map((responses[table] ?? []).map((i) => [keyOf(i), i]));
        const answer: Item[] = [];
        for (const k of request.Keys) {
          const key = keyOf(k);
          if (unprocessed.has(key)) continue;
          const then = versions.stateAt(key, t);
          const item = then ? then.item : found.get(key);
          if (then && !isDeepStrictEqual(then.item, found.get(key))) stale = true;
          if (item) answer.push(item);
        }
        responses[table] = answer;
      }
      if (eventual) {
        bump(counts.reads, 'BatchGetItem');
        if (stale) bump(counts.stale, 'BatchGetItem');
      }
      result.output = { ...output, Responses: responses };
    } else if (command === 'QueryCommand' && (input.IndexName !== undefined || !input.ConsistentRead)) {
      const call = input.IndexName === undefined ? 'Query' : 'Query (index)';
      const answer = staleQuery(versions, input, output, t);
      bump(counts.reads, call);
      if (answer.stale) bump(counts.stale, call);
      result.output = answer.output;
    }
    return result;
  };

  const layer = (client: DynamoDBClient) => {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const command = context.commandName ?? '';
        const input = args.input as Input;
        if (command === 'QueryCommand' && input.IndexName !== undefined && input.ConsistentRead)
          throw Object.assign(new Error('Consistent reads are not supported on global secondary indexes'), {
            name: 'ValidationException',
            $fault: 'client',
            $metadata: { httpStatusCode: 400 },
          });
        if (!WRITES.has(command)) return read(command, input, args, next as never) as never;
        const keys = writtenKeys(command, input);
        const transaction = command === 'TransactWriteItemsCommand';
        // for the fault step below, which runs once per attempt
        (context as WriteContext)[WRITE] = {
          keys: transaction ? transactionKeys(input) : keys.map(keyOf),
          transactItems: transaction ? (input.TransactItems as unknown[]).length : 0,
        };
        if (!opts.staleMs || !keys.length) return next(args);
        const before = await current(tableOf(command, input)!, keys);
        let applied = false;
        try {
          const result = await next(args);
          applied = true;
          return result;
        } catch (err) {
          applied = mayHaveApplied(err); // a 5xx or no answer: it may have taken effect (its old images are kept)
          throw err;
        } finally {
          if (applied) {
            const at = now();
            for (const k of keys) versions.record(keyOf(k), at, before.get(keyOf(k)));
          }
        }
      },
      { step: 'initialize', name: 'awsFaithfulReads' },
    );
    if (opts.faultRate > 0)
      // below the deserializer and the retry middleware: the attempt answers as DynamoDB would, the SDK parses and retries it
      client.middlewareStack.add(
        (next, context) => async (args) => {
          const command = context.commandName ?? '';
          const write = (context as WriteContext)[WRITE];
          const transactItems = write?.transactItems ?? 0;
          const answer = (f: Fault) => {
            fault(f.kind, command);
            return { response: errorResponse(f), output: undefined } as never;
          };
          if (SINGLE_WRITES.has(command) && write?.keys.some((k) => transacting.has(k))) return answer(SINGLE_ITEM_CONFLICT);
          const attempt = async () => {
            if (random() >= opts.faultRate) return next(args);
            // a transaction sent again with the token of one that applied is answered from that one, never run
            // again: throttled or failed perhaps, but not cancelled for a conflict
            const token = transactItems ? tokenOf(args.request) : undefined;
            const replay = token !== undefined && appliedTokens.has(token);
            const faults = faultsFor(command, replay ? 0 : transactItems);
            const f = faults[Math.min(faults.length - 1, Math.floor(random() * faults.length))]!;
            if (!f.applied || replay) return answer(f.applied ? INTERNAL : f); // a replay changes nothing
            const real = (await next(args)) as { response: { statusCode: number; body?: { resume?: () => void } } };
            real.response.body?.resume?.(); // its answer is dropped unread
            if (real.response.statusCode >= 300) return answer(INTERNAL);
            if (token !== undefined) rememberApplied(token);
            return answer(f);
          };
          if (command !== 'TransactWriteItemsCommand' || !write) return attempt();
          for (const k of write.keys) transacting.set(k, (transacting.get(k) ?? 0) + 1);
          try {
            return await attempt();
          } finally {
            for (const k of write.keys) {
              const n = transacting.get(k)! - 1;
              if (n) transacting.set(k, n);
              else transacting.delete(k);
            }
          }
        },
        { step: 'deserialize', name: 'awsFaithfulFaults', priority: 'low' },
      );
  };
  return Object.assign(layer, { counts });
}
