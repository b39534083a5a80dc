/**
 * The full seed of bench/RESULTS.md (issue 9 section 2): one large tenant written straight into DynamoDB Local.
 *
 * How the items are made: the seed is a plan of API operations (seedPlan: users, teams, labels, periods, goals
 * in four levels, check-ins), each body parsed by its route's own schema and run through the domain service its
 * handler calls (createUser, createGoal, createCheckin...) against an in-process table (MemoryTable,
 * bench-full-seed-memory.ts). So every item (entity, entries, references, uniqueness claims, check-in order
 * items, the goal following its check-in, rollup aggregates) is what the API writes, built by the same code: a
 * schema or store change changes the seed with it, or breaks its build. Derived state is computed the same way:
 * the in-process table keeps every write as a change, and the change stream's projections
 * (shared/stream/projections.ts; outbound events left out: publishing 600,000 events to a tenant without
 * webhooks changes no state) are applied to them here, in commit order, until nothing more changes. History
 * items, rollup repairs and any read model a projection keeps are therefore written straight too.
 *
 * Then the items go to DynamoDB Local with BatchWriteItem (25 a call, `concurrency` calls in flight, unprocessed
 * items retried with back-off), chunk by chunk; check-ins, their order items and history are dropped from memory
 * once written (a goal's check-ins are one chunk's), so memory holds the goals, not the 2.5 million items.
 *
 * The change stream: the table is created without its stream for the seed (createSeedTable) and the local stack
 * turns the stream on when it starts (dynamodb-local.ts ensureTable), so the stream begins after the seed: its
 * derived state is already in the table, and the stack's poller does not replay 2.5 million records.
 */
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Caller } from '#shared/auth/caller.ts';
import { callerTeamUuids } from '#shared/auth/load-caller.ts';
import { ENTRY_SK_PREFIX, keys, REFERENCE_SK_PREFIX } from '#shared/db/keys.ts';
import { createTableInput } from '#shared/db/table.ts';
import { sleep } from '#shared/clock.ts';
import { commandClock } from '#shared/command/run.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { createCheckin } from '#shared/domain/checkins/service.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { HISTORY_SK_PREFIX } from '#shared/domain/history/entity.ts';
import { childrenOfGoal, childrenOfKind, GOAL_KINDS, goalEntity, PATH_BY_KIND, type GoalKind } from '#shared/domain/goals/entity.ts';
import { createGoal } from '#shared/domain/goals/create.ts';
import { updateGoal } from '#shared/domain/goals/update.ts';
import { createLabel } from '#shared/domain/labels/service.ts';
import { createTeam } from '#shared/domain/teams/service.ts';
import { createTenant } from '#shared/domain/tenants.ts';
import { createTimePeriod } from '#shared/domain/time-periods/service.ts';
import { createUser } from '#shared/domain/users/service.ts';
import { validateBody } from '#shared/http/api.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import type { Log } from '#shared/logger.ts';
import { CheckinCreateBody } from '#shared/schemas/checkins.ts';
import { GoalCreateBody, GoalUpdateBody } from '#shared/schemas/goals.ts';
import { LabelCreateBody } from '#shared/schemas/labels.ts';
import { TeamCreateBody } from '#shared/schemas/teams.ts';
import { TimePeriodCreateBody } from '#shared/schemas/time-periods.ts';
import { UserCreateBody } from '#shared/schemas/users.ts';
import { applyChange } from '#shared/stream/apply.ts';
import { outboundEventsProjection } from '#shared/stream/projections/events.ts';
import { projections } from '#shared/stream/projections.ts';
import type { TableChange } from '#shared/table-change.ts';
import { must } from './bench-http.ts';
import { MemoryTable } from './bench-full-seed-memory.ts';

// ---------- the plan ----------

export interface SeedSize {
  goals: number;
  checkins: number;
  users: number;
  teams: number;
  labels: number;
}

/** The tenant of bench/RESULTS.md (issue 9). */
export const FULL_SEED: SeedSize = { goals: 100_000, checkins: 500_000, users: 2_000, teams: 200, labels: 100 };

/** What a plan's bodies refer to: the uuids created so far, by kind, in creation order. */
export interface Refs {
  users: string[];
  teams: string[];
  labels: string[];
  labelNames: string[];
  periods: string[];
  goals: string[];
  /** The kind of each goal of `goals`. */
  goalKinds: GoalKind[];
  checkins: string[];
}

/** One API operation of a plan: a create, its body built from what exists when it runs. */
export type PlanOp =
  | { op: 'user' | 'team' | 'label' | 'period'; body: (r: Refs) => unknown }
  | { op: 'goal'; kind: GoalKind; level: number; body: (r: Refs) => unknown }
  /** PUT of an existing goal (by plan index), e.g. its progress mode. */
  | { op: 'update'; goal: number; body: (r: Refs) => unknown }
  | { op: 'checkin'; goal: number; body: (r: Refs) => unknown };

const PERIODS = [
  ['2027-01-01', '2027-03-31'],
  ['2027-04-01', '2027-06-30'],
  ['2027-07-01', '2027-09-30'],
  ['2027-10-01', '2027-12-31'],
] as const;
const STATUSES = ['on_track', 'behind', 'at_risk', 'in_progress'] as const;

/**
 * Four levels, every goal in its tree's period, with an owner, a team and a label: company objectives (2.5 %),
 * team objectives under them (10 %), key results under those (30 %, with a metric) and initiatives under the
 * key results (the rest). The team objectives are then switched to rollup mode (as a client does: the mode is
 * not a create field), so each key result's check-in moves its objective's rollup aggregate. Check-ins go to key results and initiatives round-robin (all of one goal's in a row,
 * dates rising through the period), statuses cycling, so `current_status` and `last_checkin_date` vary.
 */
export function planCounts(size: SeedSize) {
  const l1 = Math.max(1, Math.round(size.goals * 0.025));
  const l2 = Math.max(1, Math.round(size.goals * 0.1));
  const l3 = Math.max(1, Math.round(size.goals * 0.3));
  const l4 = Math.max(0, size.goals - l1 - l2 - l3);
  return { levels: [l1, l2, l3, l4], kinds: ['objective', 'objective', 'key_result', 'initiative'] as GoalKind[] };
}

export function planLength(size: SeedSize): number {
  return size.users + size.teams + size.labels + PERIODS.length + size.goals + planCounts(size).levels[1]! + size.checkins;
}

export function* seedPlan(size: SeedSize): Generator<PlanOp> {
  for (let i = 0; i < size.users; i++)
    yield { op: 'user', body: () => ({ user: { email: `user${i}@bench.example`, display_name: `User ${i}`, role: 'member' } }) };
  for (let i = 0; i < size.teams; i++)
    yield {
      op: 'team',
      body: (r) => ({
        name: `Team ${i}`,
        member_uuids: [0, 1, 2, 3, 4].map((k) => r.users[(i * 5 + k) % r.users.length]!).filter((u, k, a) => a.indexOf(u) === k),
      }),
    };
  for (let i = 0; i < size.labels; i++) yield { op: 'label', body: () => ({ name: `label-${i}` }) };
  for (const [i, [start, end]] of PERIODS.entries())
    yield { op: 'period', body: () => ({ name: `2027 Q${i + 1}`, start_date: start, end_date: end }) };

  const { levels, kinds } = planCounts(size);
  // goal index of the first goal of each level; a goal's parent is spread evenly over the level above
  const first = levels.map((_, l) => levels.slice(0, l).reduce((a, b) => a + b, 0));
  const tree = new Int32Array(size.goals); // the company objective each goal descends from (its period)
  let g = 0;
  for (const [l, n] of levels.entries()) {
    for (let i = 0; i < n; i++, g++) {
      const parent = l === 0 ? -1 : first[l - 1]! + Math.floor((i * levels[l - 1]!) / n);
      tree[g] = parent < 0 ? g : tree[parent]!;
      const me = g;
      const kind = kinds[l]!;
      yield {
        op: 'goal',
        kind,
        level: l + 1,
        body: (r) => ({
          title: `${kind === 'objective' ? (l === 0 ? 'Company objective' : 'Team objective') : kind === 'key_result' ? 'Key result' : 'Initiative'} ${me}`,
          time_period_uuid: r.periods[tree[me]! % r.periods.length],
          owner_uuids: [r.users[me % r.users.length]],
          team_uuids: [r.teams[me % r.teams.length]],
          labels: [r.labelNames[me % r.labelNames.length]],
          ...(parent >= 0 ? { parents: [r.goals[parent]] } : {}),
          ...(kind === 'key_result'
            ? { metric: { name: 'Completion', start_value: 0, target_value: 100, unit: '%', metric_type: 'reach' } }
            : {}),
        }),
      };
    }
  }

  for (let i = 0; i < levels[1]!; i++) yield { op: 'update', goal: first[1]! + i, body: () => ({ progress_mode: 'rollup' }) };

  const checkable = size.goals - first[2]!; // key results and initiatives
  if (checkable <= 0) return;
  const perGoal = Math.floor(size.checkins / checkable);
  const extra = size.checkins % checkable;
  for (let k = 0; k < checkable; k++) {
    const goal = first[2]! + k;
    const n = perGoal + (k < extra ? 1 : 0);
    const [start] = PERIODS[tree[goal]! % PERIODS.length]!;
    for (let c = 0; c < n; c++) {
      const day = new Date(Date.parse(`${start}T00:00:00Z`) + (c * 7 + (goal % 7)) * 86_400_000).toISOString().slice(0, 10);
      yield {
        op: 'checkin',
        goal,
        body: (r) => ({
          goal_uuid: r.goals[goal],
          value: Math.min(100, 10 + c * 15 + (goal % 10)),
          status: STATUSES[(goal + c) % STATUSES.length],
          checkin_date: day,
        }),
      };
    }
  }
}

const emptyRefs = (): Refs => ({ users: [], teams: [], labels: [], labelNames: [], periods: [], goals: [], goalKinds: [], checkins: [] });

function remember(r: Refs, op: PlanOp, uuid: string, body: unknown) {
  if (op.op === 'user') r.users.push(uuid);
  else if (op.op === 'team') r.teams.push(uuid);
  else if (op.op === 'label') {
    r.labels.push(uuid);
    r.labelNames.push((body as { name: string }).name);
  } else if (op.op === 'period') r.periods.push(uuid);
  else if (op.op === 'goal') {
    r.goals.push(uuid);
    r.goalKinds.push(op.kind);
  } else if (op.op === 'checkin') r.checkins.push(uuid);
}

// ---------- the plan over the API (the small tenants, and the test's twin of a straight seed) ----------

const API_PATH = {
  user: '/rest/v2/users',
  team: '/rest/v2/teams',
  label: '/rest/v2/labels',
  period: '/rest/v2/time_periods',
  checkin: '/rest/v2/checkins',
} as const;

/** Runs a plan over HTTP, one operation at a time, in plan order (so creation order matches a straight seed of it). */
export async function seedPlanOverApi(url: string, token: string, size: SeedSize): Promise<Refs> {
  const r = emptyRefs();
  for (const op of seedPlan(size)) {
    const body = op.body(r);
    if (op.op === 'update') {
      await must(url, token, 'PUT', `/rest/v2/${PATH_BY_KIND[r.goalKinds[op.goal]!]}/${r.goals[op.goal]}`, body);
      continue;
    }
    const path = op.op === 'goal' ? `/rest/v2/${PATH_BY_KIND[op.kind]}` : API_PATH[op.op];
    const res = await must(url, token, 'POST', path, body);
    remember(r, op, res.body.data.record.uuid as string, body);
  }
  return r;
}

// ---------- the plan straight into the table ----------

const silent = { info() {}, warn() {}, error() {}, debug() {}, appendKeys() {} } as unknown as Log;

/** The table as the seed writes it: no stream (the local stack turns it on after the seed, starting empty). */
export async function createSeedTable(endpoint: string, tableName: string): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const { StreamSpecification: _stream, ...input } = createTableInput(tableName);
  await client.send(new CreateTableCommand(input));
  client.destroy();
}

export interface StraightSeed {
  tenantId: string;
  adminUuid: string;
  refs: Refs;
  /** Items written to DynamoDB Local (puts; an item written twice counts twice). */
  items: number;
  changes: number;
  seconds: number;
  /** Of `seconds`, the time spent waiting for BatchWriteItem (the rest is building the items in process, while writes run). */
  waitSeconds: number;
}

export interface StraightSeedOptions {
  endpoint: string;
  tableName: string;
  size: SeedSize;
  tenantName?: string;
  adminEmail?: string;
  /** BatchWriteItem calls in flight. */
  concurrency?: number;
  /** Plan operations between flushes to DynamoDB Local. */
  chunk?: number;
  progress?: (line: string) => void;
}

/**
 * Items no later operation of the plan reads are dropped from memory once written: check-ins, their order items
 * and entries, history items, a goal's association entries other than its parent links (owner, team, label,
 * period: only lists read them, and a label's rename, which the plan never makes) and the references goals keep
 * in periods and teams (only a delete reads them); not the `child_of` references parents keep (rollups read them).
 * Goals, their parent links (rollups walk them), the directory and team memberships stay.
 */
const evictable = (pk: string, sk: string, tenant: string) => {
  const t = keys.tenantPrefix(tenant);
  if (sk.startsWith(HISTORY_SK_PREFIX)) return true;
  // a goal's `child_of` entries, kept in its parent's partition as references, are what rollups walk: they stay
  if (sk.startsWith(REFERENCE_SK_PREFIX)) return !sk.startsWith(KEPT_CHILD_REFS);
  if (pk.startsWith(`${t}checkin#`) || pk.startsWith(`${t}checkin_order#`)) return true;
  return (
    pk.startsWith(`${t}${goalEntity.type}#`) && sk.startsWith(ENTRY_SK_PREFIX) && !KEPT_GOAL_ENTRIES.some((prefix) => sk.startsWith(prefix))
  );
};
const KEPT_CHILD_REFS = `${REFERENCE_SK_PREFIX}${childrenOfGoal.list}@${childrenOfGoal.name}#`;
const KEPT_GOAL_ENTRIES = [
  `${ENTRY_SK_PREFIX}${childrenOfGoal.list}@${childrenOfGoal.name}#`,
  ...GOAL_KINDS.map((k) => `${ENTRY_SK_PREFIX}${childrenOfKind(k).name}#`),
];

export async function seedStraight(opts: StraightSeedOptions): Promise<StraightSeed> {
  // Each command at its own millisecond, as over HTTP: in process, two check-ins of one goal can run within one, and
  // a tie in created_at orders them by uuid where the command took the one it wrote as the newest. Only while
  // the seed runs: the clock is the process's again after it.
  const processClock = commandClock.now;
  let lastMs = 0;
  commandClock.now = () => new Date((lastMs = Math.max(Date.now(), lastMs + 1))).toISOString();
  try {
    return await seed(opts);
  } finally {
    commandClock.now = processClock;
  }
}

async function seed(opts: StraightSeedOptions): Promise<StraightSeed> {
  const started = performance.now();
  process.env.TABLE_NAME ??= opts.tableName; // the store names it in every command (the in-process table answers any)
  const mem = new MemoryTable(opts.tableName);
  const doc = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: opts.endpoint,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 10,
    }),
    {
      marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    },
  );
  const { tenant, admin } = await createTenant(async (tenantId) => ({ tenantId, db: mem.db }), {
    name: opts.tenantName ?? 'Bench full',
    adminEmail: opts.adminEmail ?? 'bench-full@example.test',
  });
  const data: DataCtx = { tenantId: tenant.uuid, db: mem.db };
  const caller: Caller = { tenantId: tenant.uuid, userId: admin.uuid, role: 'admin', user: admin };
  const request = (n: number): DomainCtx => {
    let teams: Promise<Set<string>> | undefined;
    return {
      ...data,
      caller,
      loader: new Loader(data),
      log: silent,
      requestId: `seed-${n}`,
      teams: () => (teams ??= callerTeamUuids(data, admin.uuid)),
    };
  };
  const streamed = projections.filter((p) => p.name !== outboundEventsProjection.name);
  let changeCount = 0;
  let written = 0;
  let waitSeconds = 0;

  /** The stream's projections over every change so far, and over the changes they make, until none is left. */
  const replayStream = async () => {
    for (let batch = mem.takeChanges(); batch.length; batch = mem.takeChanges()) {
      for (const c of batch) {
        const change: TableChange = {
          eventId: `seed-${changeCount++}`,
          eventName: c.eventName,
          at: c.at,
          tenantId: tenant.uuid,
          keys: c.keys,
          oldImage: c.oldImage,
          newImage: c.newImage,
        };
        await applyChange(change, streamed, { data, log: silent });
      }
    }
  };

  type Dirty = ReturnType<MemoryTable['takeDirty']>;
  /**
   * A table with its stream on (the fidelity test's: the stack runs beside the seed) hands these writes to the
   * live projections, which read the table as they find it: a goal's repair after a check-in must find the goal,
   * its check-in order and its newest check-in already there, or it moves the goal back to an older value (each
   * move a history point the API never made). So the check-ins go last, each goal's newest first, one call at a
   * time; the rest before them, goals after what they name. (The full seed's table has no stream yet: same order.)
   */
  const writeItems = async (items: Dirty) => {
    const isCheckin = (i: Dirty[number]) => i.key.PK.startsWith(`${keys.tenantPrefix(tenant.uuid)}checkin#`) && i.key.SK === '#';
    const isGoal = (i: Dirty[number]) => i.key.PK.startsWith(`${keys.tenantPrefix(tenant.uuid)}${goalEntity.type}#`) && i.key.SK === '#';
    const newestFirst = (a: Dirty[number], b: Dirty[number]) => {
      const ra = (a.item?.rec ?? {}) as { goal_uuid?: string; created_at?: string };
      const rb = (b.item?.rec ?? {}) as { goal_uuid?: string; created_at?: string };
      return (ra.goal_uuid ?? '').localeCompare(rb.goal_uuid ?? '') || (rb.created_at ?? '').localeCompare(ra.created_at ?? '');
    };
    await writeBatches(
      items.filter((i) => !isCheckin(i) && !isGoal(i)),
      opts.concurrency ?? 16,
    );
    await writeBatches(items.filter(isGoal), opts.concurrency ?? 16);
    await writeBatches(items.filter(isCheckin).sort(newestFirst), 1);
    written += items.filter((i) => i.item).length;
    mem.evict(
      items.map((i) => i.key),
      (pk, sk) => evictable(pk, sk, tenant.uuid),
    );
  };
  const writeBatches = async (items: Dirty, concurrency: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < items.length) {
          const part = items.slice(next, (next += 25));
          let requests: Array<Record<string, unknown>> = part.map(({ key, item }) =>
            item ? { PutRequest: { Item: item } } : { DeleteRequest: { Key: key } },
          );
          for (let attempt = 0; requests.length; attempt++) {
            const out = await doc.send(new BatchWriteCommand({ RequestItems: { [opts.tableName]: requests as never } }));
            requests = (out.UnprocessedItems?.[opts.tableName] as Array<Record<string, unknown>> | undefined) ?? [];
            if (requests.length && attempt > 12) throw new Error('BatchWriteItem: unprocessed items after 12 retries');
            if (requests.length) await sleep(Math.min(2000, 25 * 2 ** attempt));
          }
        }
      }),
    );
  };

  // One chunk is written while the next is built (the writes are DynamoDB Local's work, the building this process's).
  let writing: Promise<void> = Promise.resolve();
  const waitForWrites = async () => {
    const waitStarted = performance.now();
    await writing;
    waitSeconds += (performance.now() - waitStarted) / 1000;
  };
  const flush = async () => {
    await replayStream();
    const items = mem.takeDirty();
    await waitForWrites();
    writing = writeItems(items);
  };

  const r = emptyRefs();
  const total = planLength(opts.size);
  const chunk = opts.chunk ?? 5_000;
  let done = 0;
  let sinceFlush = 0;
  let nextReport = 0.1;
  let lastGoal = -1;
  const report = () => {
    const s = (performance.now() - started) / 1000;
    opts.progress?.(
      `seed: ${Math.round((done / total) * 100)} % (${done.toLocaleString('en')} of ${total.toLocaleString('en')} operations, ${written.toLocaleString('en')} items written, ${Math.round(written / s)} items/s, ${s.toFixed(0)} s, ${waitSeconds.toFixed(0)} s of them waiting for DynamoDB Local, heap ${Math.round(process.memoryUsage().heapUsed / 2 ** 20)} MB)`,
    );
  };
  for (const op of seedPlan(opts.size)) {
    // flush between operations, never inside one goal's run of check-ins (they read the goal's newest check-in)
    const due = sinceFlush >= chunk || done / total >= nextReport;
    if (due && !(op.op === 'checkin' && op.goal === lastGoal)) {
      await flush();
      sinceFlush = 0;
      if (done / total >= nextReport) {
        report();
        while (done / total >= nextReport) nextReport += 0.1;
      }
    }
    const body = op.body(r);
    const ctx = request(done);
    let uuid: string | undefined;
    switch (op.op) {
      case 'user':
        uuid = (await createUser(ctx, validateBody(UserCreateBody, body).user)).uuid;
        break;
      case 'team':
        uuid = (await createTeam(ctx, validateBody(TeamCreateBody, body))).uuid;
        break;
      case 'label':
        uuid = (await createLabel(ctx, validateBody(LabelCreateBody, body))).uuid;
        break;
      case 'period':
        uuid = (await createTimePeriod(ctx, validateBody(TimePeriodCreateBody, body))).uuid;
        break;
      case 'goal':
        uuid = (await createGoal(ctx, op.kind, validateBody(GoalCreateBody, body))).goal.uuid;
        break;
      case 'update':
        await updateGoal(ctx, r.goalKinds[op.goal]!, r.goals[op.goal]!, validateBody(GoalUpdateBody, body));
        break;
      case 'checkin':
        uuid = (await createCheckin(ctx, validateBody(CheckinCreateBody, body))).checkin.uuid;
        lastGoal = op.goal;
        break;
    }
    if (uuid) remember(r, op, uuid, body);
    done++;
    sinceFlush++;
    if (done % 50 === 0) await new Promise((resolve) => setImmediate(resolve)); // the writes in flight get their turn
  }
  await flush();
  await waitForWrites();
  report();
  doc.destroy();
  return {
    tenantId: tenant.uuid,
    adminUuid: admin.uuid,
    refs: r,
    items: written,
    changes: changeCount,
    seconds: (performance.now() - started) / 1000,
    waitSeconds,
  };
}
