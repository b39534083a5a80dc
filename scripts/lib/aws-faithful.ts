import { randomUUID } from 'node:crypto';
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
 *    ThrottlingException, InternalServerError, and for transactions TransactionCanceledException with a
 *    TransactionConflict reason): injected below the SDK's retry middleware, so the client's own retry
 *    strategy (the one deployed) retries what it would retry in AWS.
 */
interface FaithfulOptions {
  /** How old an eventually consistent answer is (0: none is stale). */
  staleMs: number;
  /** The fraction of HTTP attempts that fail (0: none). */
  faultRate: number;
  /** DynamoDB Local, for the strongly consistent read of a write's old images. */
  endpoint: string;
  random?: () => number;
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

/** An eventually consistent Query's answer as of `t`: changed items as they were, items written since gone, removed ones back. */
function staleQuery(versions: Versions, input: Input, output: Output, t: number): Output {
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
  return { ...rest, Items: answer, Count: answer.length, ...(lastKey ? { LastEvaluatedKey: lastKey } : {}) };
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

/** An error answer as DynamoDB sends it (AWS JSON 1.0), for the SDK's own deserializer. */
function faultResponse(command: string, transactItems: number, pick: number) {
  const faults: { status: number; type: string; body: Record<string, unknown> }[] = [
    {
      status: 400,
      type: 'ProvisionedThroughputExceededException',
      body: { message: 'The level of configured provisioned throughput for the table was exceeded.' },
    },
    { status: 400, type: 'ThrottlingException', body: { message: 'Throughput exceeds the current capacity of your table or index.' } },
    { status: 500, type: 'InternalServerError', body: { message: 'Internal server error' } },
  ];
  if (command === 'TransactWriteItemsCommand' && transactItems > 0) {
    const reasons = Array.from({ length: transactItems }, (_, i) =>
      i === 0 ? { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' } : { Code: 'None' },
    );
    faults.push({
      status: 400,
      type: 'TransactionCanceledException',
      body: {
        Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
        CancellationReasons: reasons,
      },
    });
  }
  const fault = faults[Math.min(faults.length - 1, Math.floor(pick * faults.length))]!;
  return {
    name: fault.type,
    response: {
      statusCode: fault.status,
      reason: fault.status === 500 ? 'Internal Server Error' : 'Bad Request',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': randomUUID() },
      body: new TextEncoder().encode(JSON.stringify({ __type: `${FAULT_TYPE}${fault.type}`, ...fault.body })),
    },
  };
}

/** How many faults of each kind the layer injected (the tests read them). */
export const injectedFaults = new Map<string, number>();

/** What the mode adds to one client: the stale reads and the write recording, and the faults below the retries. */
export function awsFaithfulLayer(opts: FaithfulOptions): (client: DynamoDBClient) => void {
  const random = opts.random ?? Math.random;
  const versions = new Versions(opts.staleMs);
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

  return (client) => {
    if (opts.staleMs > 0)
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
          const keys = writtenKeys(command, input);
          if (keys.length) {
            const table = tableOf(command, input)!;
            const before = await current(table, keys);
            const result = await next(args);
            const at = Date.now();
            for (const k of keys) versions.record(keyOf(k), at, before.get(keyOf(k)));
            return result;
          }
          const result = await next(args);
          const t = Date.now() - opts.staleMs;
          const output = result.output as unknown as Output;
          if (command === 'GetItemCommand' && !input.ConsistentRead) {
            const then = versions.stateAt(keyOf(input.Key as Item), t);
            if (then) {
              const { Item: _, ...rest } = output;
              result.output = { ...rest, ...(then.item ? { Item: then.item } : {}) } as never;
            }
          } else if (command === 'BatchGetItemCommand') {
            const responses = { ...((output.Responses ?? {}) as Record<string, Item[]>) };
            for (const [table, request] of Object.entries(
              input.RequestItems as Record<string, { Keys: Item[]; ConsistentRead?: boolean }>,
            )) {
              if (request.ConsistentRead) continue;
              const unprocessed = new Set(
                ((output.UnprocessedKeys as Record<string, { Keys: Item[] }> | undefined)?.[table]?.Keys ?? []).map(keyOf),
              );
              const found = new Map((responses[table] ?? []).map((i) => [keyOf(i), i]));
              const answer: Item[] = [];
              for (const k of request.Keys) {
                const key = keyOf(k);
                if (unprocessed.has(key)) continue;
                const then = versions.stateAt(key, t);
                const item = then ? then.item : found.get(key);
                if (item) answer.push(item);
              }
              responses[table] = answer;
            }
            result.output = { ...output, Responses: responses } as never;
          } else if (command === 'QueryCommand' && (input.IndexName !== undefined || !input.ConsistentRead))
            result.output = staleQuery(versions, input, output, t) as never;
          return result;
        },
        { step: 'initialize', name: 'awsFaithfulReads' },
      );
    if (opts.faultRate > 0)
      // below the deserializer and the retry middleware: the attempt answers as DynamoDB would, the SDK parses and retries it
      client.middlewareStack.add(
        (next, context) => async (args) => {
          if (random() >= opts.faultRate) return next(args);
          const command = context.commandName ?? '';
          const body = (args.request as { body?: string | Uint8Array }).body;
          const text = typeof body === 'string' || body === undefined ? body : new TextDecoder().decode(body);
          const transactItems = command === 'TransactWriteItemsCommand' && text ? (JSON.parse(text).TransactItems?.length ?? 0) : 0;
          const fault = faultResponse(command, transactItems, random());
          injectedFaults.set(fault.name, (injectedFaults.get(fault.name) ?? 0) + 1);
          return { response: fault.response, output: undefined } as never;
        },
        { step: 'deserialize', name: 'awsFaithfulFaults', priority: 'low' },
      );
  };
}
