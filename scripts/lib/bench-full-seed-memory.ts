import { TABLE_DEFINITION } from '#shared/db/table.ts';
import type { Db } from '#shared/db/client.ts';

/**
 * An in-process stand-in for the table, for the straight seed (scripts/lib/bench-full-seed.ts): the domain
 * services run unchanged against it (their store calls, shared/db/, reach `send`), so every item the
 * seed writes is exactly what the API writes, built by the same code; it is then copied into DynamoDB Local
 * in batches. It speaks the document client's commands the store uses (GetItem, BatchGetItem, Query on the
 * base table and GSI1, TransactWriteItems, PutItem, UpdateItem, DeleteItem) with the parts of their
 * expressions the store builds. Conditions are not evaluated: the seed writes one command at a time, with
 * nothing to race, from reads of this same table.
 *
 * Every committed write is also kept as a change (old and new image), in commit order, like the table's
 * change stream: the seed replays it through the stream projections here, so derived state (history,
 * rollups, read models) is computed by the projections' own code before anything reaches DynamoDB Local.
 */
export type Item = Record<string, unknown>;

export interface MemoryChange {
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  keys: { PK: string; SK: string };
  oldImage?: Item;
  newImage?: Item;
  at: string;
}

interface IndexDef {
  partitionKey: string;
  sortKey: string;
  nonKeyAttributes: readonly string[];
}
const INDEXES = new Map<string, IndexDef>(TABLE_DEFINITION.globalSecondaryIndexes.map((g) => [g.indexName, g]));
const projectedOf = (g: IndexDef) => new Set<string>(['PK', 'SK', g.partitionKey, g.sortKey, ...g.nonKeyAttributes]);

/** What the document client (removeUndefinedValues) stores: a deep copy without undefined values. */
function stored(v: unknown): unknown {
  if (Array.isArray(v)) return v.filter((x) => x !== undefined).map(stored);
  if (v && typeof v === 'object' && !(v instanceof Uint8Array) && !(v instanceof Set)) {
    const out: Item = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = stored(x);
    return out;
  }
  return v;
}
const copy = (i: Item) => stored(i) as Item;

/** One partition (base table by PK, or GSI1 by GSI1PK): items by sort key, the sorted sort keys built on demand. */
class Partition {
  readonly items = new Map<string, Item>();
  private sorted?: string[];
  set(sk: string, item: Item) {
    if (!this.items.has(sk)) this.sorted = undefined;
    this.items.set(sk, item);
  }
  delete(sk: string) {
    if (this.items.delete(sk)) this.sorted = undefined;
  }
  keys(): string[] {
    return (this.sorted ??= [...this.items.keys()].sort());
  }
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export class MemoryTable {
  private readonly base = new Map<string, Partition>();
  /** Per index: its partitions by index partition key, items by `<index sort key> PK SK`. */
  private readonly gsi = new Map<string, Map<string, Partition>>([...INDEXES.keys()].map((n) => [n, new Map()]));
  /** Keys written since the last `takeDirty` (what still has to be copied to DynamoDB Local). */
  private dirty = new Map<string, { PK: string; SK: string }>();
  /** Committed changes not yet taken by `takeChanges`, in commit order. */
  private changes: MemoryChange[] = [];
  calls = 0;

  constructor(readonly tableName: string) {}

  /** The `Db` the store takes: `send(command)` answered from memory. */
  get db(): Db {
    return { send: (command: { input: unknown; constructor: { name: string } }) => this.send(command) } as unknown as Db;
  }

  get size(): number {
    let n = 0;
    for (const p of this.base.values()) n += p.items.size;
    return n;
  }

  get(key: { PK: string; SK: string }): Item | undefined {
    const item = this.base.get(key.PK)?.items.get(key.SK);
    return item ? copy(item) : undefined;
  }

  /** Items written since the last call (current state; deleted ones as `undefined` with their key). */
  takeDirty(): Array<{ key: { PK: string; SK: string }; item?: Item }> {
    const out = [...this.dirty.values()].map((key) => ({ key, item: this.base.get(key.PK)?.items.get(key.SK) }));
    this.dirty = new Map();
    return out;
  }

  /** Drops the items of `keys` (already written elsewhere) that no later operation reads, to bound memory. */
  evict(keys: Iterable<{ PK: string; SK: string }>, drop: (pk: string, sk: string) => boolean): void {
    for (const { PK: pk, SK: sk } of keys) {
      // written again since (and not yet copied): the newer item stays
      if (!drop(pk, sk) || this.dirty.has(`${pk}\u0000${sk}`)) continue;
      const part = this.base.get(pk);
      const item = part?.items.get(sk);
      if (!part || !item) continue;
      this.unindex(item);
      part.delete(sk);
      if (part.items.size === 0) this.base.delete(pk);
    }
  }

  takeChanges(): MemoryChange[] {
    const out = this.changes;
    this.changes = [];
    return out;
  }

  /** Loads items as they are stored elsewhere (no change recorded, not dirty). */
  load(items: Item[]): void {
    for (const i of items) this.write(i.PK as string, i.SK as string, copy(i), false);
  }

  private static indexSortKey(g: IndexDef, item: Item) {
    return `${item[g.sortKey] as string}\u0000${item.PK as string}\u0000${item.SK as string}`;
  }

  private unindex(item: Item) {
    for (const [name, g] of INDEXES)
      if (typeof item[g.partitionKey] === 'string')
        this.gsi
          .get(name)!
          .get(item[g.partitionKey] as string)
          ?.delete(MemoryTable.indexSortKey(g, item));
  }

  private index(item: Item) {
    for (const [name, g] of INDEXES) {
      // an item is in an index when it has both of the index's keys (sparse indexes)
      if (typeof item[g.partitionKey] !== 'string' || typeof item[g.sortKey] !== 'string') continue;
      const parts = this.gsi.get(name)!;
      let p = parts.get(item[g.partitionKey] as string);
      if (!p) parts.set(item[g.partitionKey] as string, (p = new Partition()));
      p.set(MemoryTable.indexSortKey(g, item), item);
    }
  }

  private write(pk: string, sk: string, item: Item | undefined, record = true): void {
    const part = this.base.get(pk);
    const before = part?.items.get(sk);
    if (before) this.unindex(before);
    if (item) {
      let p = part;
      if (!p) this.base.set(pk, (p = new Partition()));
      p.set(sk, item);
      this.index(item);
    } else part?.delete(sk);
    if (!record) return;
    this.dirty.set(`${pk}\u0000${sk}`, { PK: pk, SK: sk });
    if (before || item) {
      this.changes.push({
        eventName: !before ? 'INSERT' : !item ? 'REMOVE' : 'MODIFY',
        keys: { PK: pk, SK: sk },
        ...(before ? { oldImage: before } : {}),
        ...(item ? { newImage: item } : {}),
        at: new Date().toISOString(),
      });
    }
  }

  private async send(command: { input: unknown; constructor: { name: string } }): Promise<unknown> {
    this.calls++;
    const input = command.input as Record<string, any>;
    switch (command.constructor.name) {
      case 'GetCommand':
        return { Item: this.get(input.Key) };
      case 'BatchGetCommand': {
        const Responses: Record<string, Item[]> = {};
        for (const [table, req] of Object.entries(input.RequestItems as Record<string, { Keys: Array<{ PK: string; SK: string }> }>)) {
          Responses[table] = req.Keys.map((k) => this.get(k)).filter((i): i is Item => !!i);
        }
        return { Responses, UnprocessedKeys: {} };
      }
      case 'QueryCommand':
        return this.query(input);
      case 'PutCommand':
        this.write(input.Item.PK, input.Item.SK, copy(input.Item));
        return {};
      case 'DeleteCommand':
        this.write(input.Key.PK, input.Key.SK, undefined);
        return {};
      case 'UpdateCommand':
        this.update(input);
        return {};
      case 'TransactWriteCommand':
        // One transaction names each item once, so applying its parts in turn is applying them together.
        for (const op of input.TransactItems as Array<Record<string, any>>) {
          if (op.Put) this.write(op.Put.Item.PK, op.Put.Item.SK, copy(op.Put.Item));
          else if (op.Delete) this.write(op.Delete.Key.PK, op.Delete.Key.SK, undefined);
          else if (op.Update) this.update(op.Update);
        }
        return {};
      default:
        throw new Error(`MemoryTable: ${command.constructor.name} is not supported (the straight seed needs it: add it here)`);
    }
  }

  /** `SET a = :v, b = b + :n, c = if_not_exists(c, :z) + :n`, `REMOVE a`, `ADD a :n` as the store builds them. */
  private update(input: Record<string, any>): void {
    const names: Record<string, string> = input.ExpressionAttributeNames ?? {};
    const values: Record<string, unknown> = input.ExpressionAttributeValues ?? {};
    const name = (t: string) => names[t.trim()] ?? t.trim();
    const key = input.Key as { PK: string; SK: string };
    const item: Item = this.get(key) ?? { PK: key.PK, SK: key.SK };
    const operand = (t: string): unknown => {
      t = t.trim();
      const ifNot = /^if_not_exists\(([^,]+),([^)]+)\)$/.exec(t); // both trimmed below: no \s* beside [^,]+ to backtrack over
      if (ifNot) return item[name(ifNot[1]!)] ?? values[ifNot[2]!.trim()];
      return t.startsWith(':') ? values[t] : item[name(t)];
    };
    const expr = input.UpdateExpression as string;
    const clauses = expr.split(/\b(SET|REMOVE|ADD|DELETE)\b/).filter((s) => s.trim());
    for (let i = 0; i < clauses.length; i += 2) {
      const verb = clauses[i]!;
      const parts = splitTop(clauses[i + 1] ?? '');
      for (const part of parts) {
        if (verb === 'REMOVE') delete item[name(part)];
        else if (verb === 'ADD') {
          const [a, v] = part.trim().split(/\s+/);
          item[name(a!)] = ((item[name(a!)] as number | undefined) ?? 0) + (values[v!] as number);
        } else if (verb === 'SET') {
          const eq = part.indexOf('=');
          const target = name(part.slice(0, eq));
          const rhs = part.slice(eq + 1);
          const [l, op, r] = splitArithmetic(rhs);
          if (op)
            item[target] = op === '+' ? (operand(l) as number) + (operand(r!) as number) : (operand(l) as number) - (operand(r!) as number);
          else item[target] = stored(operand(l));
        } else throw new Error(`MemoryTable: ${verb} in an update expression is not supported`);
      }
    }
    this.write(key.PK, key.SK, item);
  }

  private query(input: Record<string, any>): unknown {
    for (const unsupported of ['FilterExpression', 'ProjectionExpression', 'Select', 'AttributesToGet', 'QueryFilter']) {
      if (input[unsupported] !== undefined)
        throw new Error(`MemoryTable: Query with ${unsupported} is not supported (the straight seed needs it: add it here)`);
    }
    const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
    const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
    const attr = (t: string) => names[t] ?? t;
    const g: IndexDef | undefined = input.IndexName ? INDEXES.get(input.IndexName as string) : undefined;
    if (input.IndexName && !g) throw new Error(`MemoryTable: no index ${input.IndexName as string}`);
    const pkName = g ? g.partitionKey : 'PK';
    const skName = g ? g.sortKey : 'SK';
    const cond = (input.KeyConditionExpression as string).trim();
    const m = /^([#\w]+)\s*=\s*(:\w+)(?:\s+AND\s+(.+))?$/s.exec(cond);
    if (!m || attr(m[1]!) !== pkName) throw new Error(`MemoryTable: key condition "${cond}" is not supported`);
    const part = (g ? this.gsi.get(input.IndexName as string)! : this.base).get(values[m[2]!] as string);
    const onSortKey = sortKeyCondition(m[3], attr, values, skName, cond);
    let sks = part ? part.keys() : [];
    if (onSortKey) sks = sks.filter((k) => onSortKey(part!.items.get(k)![skName] as string));
    const forward = input.ScanIndexForward !== false;
    if (!forward) sks = [...sks].reverse();
    const start = input.ExclusiveStartKey as Item | undefined;
    let from = 0;
    if (start) {
      const startSk = g ? MemoryTable.indexSortKey(g, start) : (start.SK as string);
      from = sks.findIndex((k) => (forward ? compare(k, startSk) > 0 : compare(k, startSk) < 0));
      if (from < 0) from = sks.length;
    }
    const limit = typeof input.Limit === 'number' ? input.Limit : Infinity;
    const page = sks.slice(from, from + limit);
    const projected = g ? projectedOf(g) : undefined;
    const Items = page.map((k) => {
      const item = part!.items.get(k)!;
      return projected ? copy(Object.fromEntries(Object.entries(item).filter(([a]) => projected.has(a)))) : copy(item);
    });
    const last = Items.length === limit && from + limit < sks.length ? Items[Items.length - 1] : undefined;
    const LastEvaluatedKey = last
      ? g
        ? { PK: last.PK, SK: last.SK, [g.partitionKey]: last[g.partitionKey], [g.sortKey]: last[g.sortKey] }
        : { PK: last.PK, SK: last.SK }
      : undefined;
    return { Items, Count: Items.length, ScannedCount: Items.length, LastEvaluatedKey };
  }
}

/** The sort-key part of a key condition (`begins_with`, `BETWEEN`, a comparison) as a test of the sort key's value. */
function sortKeyCondition(
  text: string | undefined,
  attr: (t: string) => string,
  values: Record<string, unknown>,
  skName: string,
  whole: string,
): ((sk: string) => boolean) | undefined {
  if (!text) return undefined;
  const t = text.trim();
  const fail = () => new Error(`MemoryTable: key condition "${whole}" is not supported`);
  let m = /^begins_with\(\s*([#\w]+)\s*,\s*(:\w+)\s*\)$/.exec(t);
  if (m) {
    if (attr(m[1]!) !== skName) throw fail();
    const prefix = values[m[2]!] as string;
    return (sk) => sk.startsWith(prefix);
  }
  m = /^([#\w]+)\s+BETWEEN\s+(:\w+)\s+AND\s+(:\w+)$/.exec(t);
  if (m) {
    if (attr(m[1]!) !== skName) throw fail();
    const lo = values[m[2]!] as string;
    const hi = values[m[3]!] as string;
    return (sk) => sk >= lo && sk <= hi;
  }
  m = /^([#\w]+)\s*(<=|>=|<|>|=)\s*(:\w+)$/.exec(t);
  if (m) {
    if (attr(m[1]!) !== skName) throw fail();
    const v = values[m[3]!] as string;
    const op = m[2]!;
    return (sk) => (op === '<' ? sk < v : op === '<=' ? sk <= v : op === '>' ? sk > v : op === '>=' ? sk >= v : sk === v);
  }
  throw fail();
}

/** `a + b` / `a - b` at the top level (outside a function's parentheses), or just `a`. */
function splitArithmetic(s: string): [string, ('+' | '-')?, string?] {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (depth === 0 && (ch === '+' || ch === '-') && s[i - 1] === ' ') return [s.slice(0, i).trim(), ch, s.slice(i + 1).trim()];
  }
  return [s.trim()];
}

/** Splits a comma-separated clause at the top level (not inside the parentheses of a function). */
function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur);
  return out.map((p) => p.trim());
}
