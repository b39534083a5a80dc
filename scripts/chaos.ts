/**
 * `npm run chaos [-- --duration 75 --clients 16]`: the service under crashes, retries and failing workers,
 * on this machine only (127.0.0.1). A local stack on disk runs as a child process (its own process group:
 * API, workers, stream poller, DynamoDB Local). 16+ clients across two tenants write for `--duration`
 * seconds (check-ins on a three-level rollup hierarchy, creates, re-parenting, deletes, access requests),
 * every POST with an Idempotency-Key, retried with the same key on a timeout or a dropped connection. Midway
 * the whole stack is SIGKILLed and started again on the same data; the access-request e-mail worker fails a
 * fraction of its messages throughout (LOCAL_FAULT_*, honoured by the local stack only). Afterwards the
 * worker is "fixed" (a clean restart without the fault), `admin redrive` replays the dead letters, and the
 * invariants are checked and printed. Exit 1 on any violation. Among them: each Idempotency-Key left exactly one
 * record (the key is in the body too, so a duplicate cannot hide behind a lost request), every acknowledged
 * delete reads back discarded, every goal follows its latest check-in and every rollup its children (the
 * domain's own pure functions: decide.ts goalRepair, progress.ts), and every acknowledged re-parenting holds.
 * A webhook receiver on 127.0.0.1 (in this process, so it outlives the kill) is registered by each tenant for
 * every event type; afterwards every acknowledged check-in and create must have reached its own tenant's
 * receiver (at least once, correctly signed), and no event another tenant's. A data source (contract 16) of the
 * first tenant reads a JSON server on 127.0.0.1 (in this process too) that fails about half its requests (a 503
 * or no answer: the sync times out), in streaks, one long enough to make the source `failing`; a syncer asks for
 * one run after another (`POST /data_sources/{id}/sync`) through the kill, and afterwards every run is logged
 * once, wrote at most one check-in (its id derived from the source and the run), the goal holds the last good
 * sync's value, and the source's status, last value, last error and failing notices follow its sync log.
 * The rate limiter is on (a limit that admits the run). `--aws-faithful` runs the stack in the AWS-like mode
 * (stale eventually consistent reads, DynamoDB faults at a rate: contract section 14); the invariants are the same,
 * and the run prints and asserts what the mode did (faults injected by kind, stale reads served: both above 0).
 * `--keep` leaves the data directory; `--log` writes the stack's log into it (stack.log) to read after a violation.
 * Throughout, the change stream's lag and each queue's oldest message are printed (every 30 s) and bounded by
 * contract 14's 60 s for derived state: the stream at most STREAM_LAG_BOUND_MS behind, no queue's oldest message
 * older than QUEUE_AGE_BOUND_MS; and the events the writes produced per second and the
 * deliveries per second the receiver saw are printed. `npm run soak` is this run for 300 s in the AWS-faithful mode.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { describeFaithfulCounts, faithfulExpectation, faithfulProblems, readFaithfulCounts } from './lib/aws-faithful.ts';
import { BENCH_RATE_LIMIT } from './lib/bench-budgets.ts';
import { freePort } from './lib/dynamodb-local.ts';
import { startJsonSource, type JsonAnswer } from './lib/json-source.ts';
import { readStackStats } from './lib/stack-stats.ts';
import { goalRepair } from '#shared/domain/checkins/decide.ts';
import { checkinOrderKey, type CheckinRecord } from '#shared/domain/checkins/entity.ts';
import { GOAL_STATUSES, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { aggregateOf, aggregateProgress } from '#shared/domain/goals/progress.ts';
import { pathFor } from '#shared/domain/goals/rules.ts';
import { runUuid } from '#shared/domain/integrations/entity.ts';
import { DATA_SOURCE_FAILING_KIND, failingNoticeUuid } from '#shared/domain/integrations/sync-notices.ts';
import { FAILURES_BEFORE_FAILING } from '#shared/domain/integrations/sync-rules.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '75' },
    clients: { type: 'string', default: '16' },
    keep: { type: 'boolean', default: false },
    // the stack's own log (info and up) appended to DATA_DIR/stack.log, to read with --keep after a violation
    log: { type: 'boolean', default: false },
    // the stack as AWS may behave (scripts/lib/aws-faithful.ts: stale reads, throttling and conflicts at a rate)
    'aws-faithful': { type: 'boolean', default: false },
  },
});
const FAITHFUL = values['aws-faithful'];
const DURATION_MS = Number(values.duration) * 1000;
const CLIENTS = Math.max(16, Number(values.clients));
const ROOT = resolve(import.meta.dirname, '..');
const dataDir = mkdtempSync(join(tmpdir(), 'goal-tracking-chaos-'));
const ACCESS_QUEUE = 'access-request-notifications';
const SYNC_TIMEOUT_MS = 1000;
/** The change stream may fall this far behind: derived state follows a write within 60 s (contract 14). */
const STREAM_LAG_BOUND_MS = 60_000;
/** No queue's oldest message may be older: derived state follows a write within 60 s (contract 14). */
const QUEUE_AGE_BOUND_MS = 60_000;
const say = (msg: string) => console.log(`[chaos ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------- the stack as a child process ----------

let stack: ChildProcess | undefined;
let port = 0;
const base = () => `http://127.0.0.1:${port}`;

async function startStack(fault: boolean): Promise<void> {
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    // the limiter on, as deployed, with a limit that admits the run (issue 20: no lane runs without it)
    ...BENCH_RATE_LIMIT,
    LOG_LEVEL: values.log ? 'INFO' : 'SILENT',
    POWERTOOLS_LOG_LEVEL: values.log ? 'INFO' : 'SILENT',
    // a data source that does not answer fails its sync after this (10 s deployed): a run is short, so runs are many
    DATA_SOURCE_TIMEOUT_MS: String(SYNC_TIMEOUT_MS),
    ...(fault ? { LOCAL_FAULT_QUEUE: ACCESS_QUEUE, LOCAL_FAULT_RATE: '0.3' } : { LOCAL_FAULT_QUEUE: '' }),
  };
  const args = ['--import', 'tsx', join(ROOT, 'scripts/local-stack.ts'), '--port', String(port), ...(FAITHFUL ? ['--aws-faithful'] : [])];
  stack = spawn(process.execPath, args, {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', values.log ? openSync(join(dataDir, 'stack.log'), 'a') : 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (Date.now() > deadline) throw new Error('the local stack did not start within 90 s');
    try {
      if ((await fetch(`${base()}/openapi.json`, { signal: AbortSignal.timeout(2000) })).ok && existsSync(join(dataDir, 'stack.json')))
        return;
    } catch {
      /* not yet */
    }
    await sleep(250);
  }
}

/** SIGKILL of the whole process group: node, the in-process workers and poller, and the DynamoDB Local JVM. */
function killStack(): void {
  if (stack?.pid) process.kill(-stack.pid, 'SIGKILL');
  stack = undefined;
}

async function stopStack(): Promise<void> {
  const s = stack;
  if (!s?.pid) return;
  const exited = new Promise((r) => s.once('exit', r));
  process.kill(-s.pid, 'SIGTERM');
  await Promise.race([exited, sleep(10_000)]);
  try {
    process.kill(-s.pid, 'SIGKILL');
  } catch {
    /* gone */
  }
  stack = undefined;
}

// ---------- HTTP with retries ----------

interface Outcome {
  status: number;
  body: any;
}
const fivexx: Array<{ at: number; status: number; what: string }> = [];
let killWindow: { from: number; to: number } | undefined;
/** When the clients stop starting new writes. */
let stoppedAt: number | undefined;
/** Violations found along the way (the final checks are re-run until the stream has converged). */
const runViolations: string[] = [];
/** Why logical requests ran out of time unanswered: their last failure. */
const unanswered = new Map<string, number>();

/** One logical request: retried with the same Idempotency-Key on a timeout, a dropped connection or a 5xx, until it is answered or time runs out. */
async function call(token: string, method: string, path: string, body?: unknown, key = randomUUID()): Promise<Outcome | undefined> {
  let last = '';
  // A logical request is retried until answered; once writing stops, requests still in flight get a little longer.
  const started = Date.now();
  for (let attempt = 0; Date.now() < Math.max((stoppedAt ?? Infinity) + 30_000, started + 60_000); attempt++) {
    try {
      const res = await fetch(`${base()}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          ...(method === 'POST' ? { 'idempotency-key': key } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      });
      const text = await res.text();
      if (res.status >= 500) {
        last = `${res.status} ${text.slice(0, 200)}`;
        fivexx.push({ at: Date.now(), status: res.status, what: `${method} ${path}` });
        await sleep(200 * 2 ** Math.min(attempt, 4));
        continue;
      }
      if (res.status === 409 && method === 'POST' && text.includes('idempotency_key_in_use')) {
        last = '409 idempotency_key_in_use';
        await sleep(200); // idempotency_key_in_use: the first try is still running; ask again
        continue;
      }
      return { status: res.status, body: text ? JSON.parse(text) : null };
    } catch (err) {
      last = (err as Error).name === 'TimeoutError' ? 'timeout' : String((err as Error).cause ?? err).slice(0, 120);
      await sleep(200 * 2 ** Math.min(attempt, 4)); // timeout or connection refused (the stack is down): retry
    }
  }
  if (last) unanswered.set(last, (unanswered.get(last) ?? 0) + 1);
  return undefined;
}

async function all(token: string, path: string): Promise<any[]> {
  const out: any[] = [];
  for (let page = 1; ; page++) {
    const res = await call(token, 'GET', `${path}${path.includes('?') ? '&' : '?'}page=${page}&per_page=100`);
    if (res?.status !== 200) throw new Error(`GET ${path}: ${res?.status} ${JSON.stringify(res?.body)}`);
    out.push(...res.body.data.records);
    if (!res.body.data.pagy.next) return out;
  }
}

// ---------- the webhook receiver ----------

/** Deliveries per receiving tenant (by the path `/hook/<tenant name>`): event type and record uuid. */
const delivered = new Map<string, Array<{ id: string; type: string; uuid: string; tenant: string; signed: boolean }>>();
/** When each delivery reached the receiver (the deliveries per second). */
const arrivals: number[] = [];
const secrets = new Map<string, string>();
const hooks = new Map<string, string>();
/** Per tenant, its delivery log by type and status, when events were missing (printed with the violations). */
const deliveryLogs = new Map<string, string>();

function verifySignature(secret: string, id: string, timestamp: string, body: string, header: string): boolean {
  const want = Buffer.from(
    `v1,${createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
      .update(`${id}.${timestamp}.${body}`)
      .digest('base64')}`,
  );
  return header.split(' ').some((sig) => sig.length === want.length && timingSafeEqual(Buffer.from(sig), want));
}

async function startReceiver(): Promise<string> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const name = decodeURIComponent((req.url ?? '').replace(/^\/hook\//, ''));
      const body = Buffer.concat(chunks).toString('utf8');
      const header = (h: string) => String(req.headers[h] ?? '');
      try {
        const event = JSON.parse(body);
        const list = delivered.get(name) ?? [];
        const signed = verifySignature(
          secrets.get(name) ?? 'whsec_',
          header('webhook-id'),
          header('webhook-timestamp'),
          body,
          header('webhook-signature'),
        );
        list.push({ id: header('webhook-id'), type: event.type, uuid: event.data?.record?.uuid, tenant: event.data?.tenant_uuid, signed });
        arrivals.push(Date.now());
        delivered.set(name, list);
        res.writeHead(200).end('ok');
      } catch {
        res.writeHead(400).end('bad');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  server.unref();
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/hook/`;
}

// ---------- the run ----------

interface Tenant {
  id: string;
  name: string;
  admin: string;
  members: Array<{ uuid: string; token: string }>;
  period: string;
  spareTeam: string;
  objective: string;
  krs: string[];
  leaves: string[];
  docs: string[];
  owner: { uuid: string; token: string };
}

const acked = {
  checkins: [] as Array<{ tenant: Tenant; uuid: string; goal: string }>,
  creates: [] as Array<{ tenant: Tenant; uuid: string }>,
  deletes: new Set<string>(),
  requests: [] as Array<{ tenant: Tenant; uuid: string; outcome: string }>,
};
const counts = new Map<string, number>();

/**
 * Every logical check-in and create by its Idempotency-Key, which the body carries too (check-in `note`, goal
 * `title`: `chaos <key>`), so the records a key produced are found whatever answer was lost. `uuid`: the
 * record the acknowledged answer named; `answer`: the final status, or `lost` when none came (applied once or not at all).
 */
interface Keyed {
  tenant: Tenant;
  answer: number | 'lost';
  uuid?: string;
}
const keyed = { checkins: new Map<string, Keyed>(), creates: new Map<string, Keyed>() };
const MARK = 'chaos ';
const markerOf = (text: unknown) => (typeof text === 'string' && text.startsWith(MARK) ? text.slice(MARK.length) : undefined);
/** Goals whose delete was sent but not acknowledged: applied or not. */
const deletesUnanswered = new Set<string>();
/**
 * The parent each created goal must have: the one of its last acknowledged move (or its create). A goal is
 * moved by one client at a time (`moving`), so "last" is well defined; a move left unanswered adds its parent
 * to the goal's `maybe` parents (it may have applied, after the last acknowledged one).
 */
const parentOf = new Map<string, { parent: string; maybe: Set<string>; moves: number }>();
const moving = new Set<string>();
const count = (k: string) => counts.set(k, (counts.get(k) ?? 0) + 1);

async function setupTenant(runAdmin: (argv: string[]) => Promise<any>, name: string, receiver: string): Promise<Tenant> {
  const t = await runAdmin(['create-tenant', '--name', name, '--admin-email', `admin-${randomUUID().slice(0, 8)}@chaos.test`]);
  const admin = t.token as string;
  const must = async (method: string, path: string, body?: unknown, token = admin) => {
    const r = await call(token, method, path, body);
    if (!r || r.status >= 300) throw new Error(`${method} ${path}: ${r?.status} ${JSON.stringify(r?.body)}`);
    return r.body.data?.record ?? r.body.data ?? r.body;
  };
  const hook = await call(admin, 'POST', '/webhooks', { url: `${receiver}${encodeURIComponent(name)}`, events: ['*'] });
  if (hook?.status !== 201) throw new Error(`POST /webhooks: ${hook?.status} ${JSON.stringify(hook?.body)}`);
  secrets.set(name, hook.body.data.record.secret);
  hooks.set(name, hook.body.data.record.uuid);
  const members = [];
  for (let i = 0; i < 4; i++) {
    const u = await must('POST', '/rest/v2/users', { user: { email: `m${i}-${randomUUID().slice(0, 6)}@chaos.test`, role: 'member' } });
    members.push({
      uuid: u.uuid,
      token: (await runAdmin(['issue-token', '--tenant', t.tenant_uuid, '--user', u.uuid, '--ttl', '7200'])).token,
    });
  }
  const period = await must('POST', '/rest/v2/time_periods', { name: 'Chaos', start_date: '2026-01-01', end_date: '2026-12-31' });
  const spareTeam = await must('POST', '/rest/v2/teams', { name: `Spare ${randomUUID().slice(0, 6)}` });
  const objective = await must('POST', '/rest/v2/objectives', { title: 'O', time_period_uuid: period.uuid });
  const krs = [];
  const leaves = [];
  for (let k = 0; k < 2; k++) {
    const kr = await must('POST', '/rest/v2/key_results', { title: `K${k}`, time_period_uuid: period.uuid, parents: [objective.uuid] });
    krs.push(kr.uuid);
    for (let i = 0; i < 3; i++)
      leaves.push(
        (
          await must('POST', '/rest/v2/initiatives', {
            title: `I${k}${i}`,
            time_period_uuid: period.uuid,
            parents: [kr.uuid],
            metric: { start_value: 0, target_value: 100, metric_type: 'reach' },
          })
        ).uuid,
      );
  }
  for (const id of [objective.uuid]) await must('PUT', `/rest/v2/objectives/${id}`, { progress_mode: 'rollup' });
  for (const id of krs) await must('PUT', `/rest/v2/key_results/${id}`, { progress_mode: 'rollup' });
  const owner = members[0]!;
  const docs = [];
  for (let i = 0; i < 4; i++)
    docs.push((await must('POST', '/documents', { title: `Chaos doc ${name} ${i}`, content: 'x' }, owner.token)).uuid as string);
  return {
    id: t.tenant_uuid,
    name,
    admin,
    members: members.slice(1),
    period: period.uuid,
    spareTeam: spareTeam.uuid,
    objective: objective.uuid,
    krs,
    leaves,
    docs,
    owner,
  };
}

const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)]!;

async function client(t: Tenant): Promise<void> {
  while (stoppedAt === undefined) {
    const r = Math.random();
    if (r < 0.5) {
      const goal = pick(t.leaves);
      const key = randomUUID();
      const body = { goal_uuid: goal, value: Math.round(Math.random() * 100), status: pick([...GOAL_STATUSES]), note: `${MARK}${key}` };
      const res = await call(t.admin, 'POST', '/rest/v2/checkins', body, key);
      keyed.checkins.set(key, {
        tenant: t,
        answer: res?.status ?? 'lost',
        uuid: res?.status === 201 ? res.body.data.record.uuid : undefined,
      });
      if (res?.status === 201) acked.checkins.push({ tenant: t, uuid: res.body.data.record.uuid, goal }), count('check-in');
      else count(`check-in ${res?.status ?? 'unanswered'}`);
    } else if (r < 0.62) {
      const key = randomUUID();
      const parent = pick(t.krs);
      const res = await call(
        t.admin,
        'POST',
        '/rest/v2/initiatives',
        {
          title: `${MARK}${key}`,
          time_period_uuid: t.period,
          parents: [parent],
          ...(Math.random() < 0.3 ? { team_uuids: [t.spareTeam] } : {}),
        },
        key,
      );
      const uuid = res?.status === 201 ? (res.body.data.record.uuid as string) : undefined;
      keyed.creates.set(key, { tenant: t, answer: res?.status ?? 'lost', uuid });
      if (uuid) acked.creates.push({ tenant: t, uuid }), parentOf.set(uuid, { parent, maybe: new Set(), moves: 0 }), count('create');
      else count(`create ${res?.status ?? 'unanswered'}`);
    } else if (r < 0.72) {
      const mine = acked.creates.filter((c) => c.tenant === t && !acked.deletes.has(c.uuid) && !moving.has(c.uuid));
      if (!mine.length) continue;
      const moved = pick(mine).uuid;
      const parent = pick(t.krs);
      moving.add(moved);
      const res = await call(t.admin, 'PUT', `/rest/v2/initiatives/${moved}`, { parents: [parent] });
      moving.delete(moved);
      const want = parentOf.get(moved)!;
      if (res?.status === 200) Object.assign(want, { parent, maybe: new Set(), moves: want.moves + 1 }), count('re-parent');
      else if (!res) want.maybe.add(parent), count('re-parent unanswered');
      else count(`re-parent ${res.status}`);
    } else if (r < 0.78) {
      const mine = acked.creates.filter((c) => c.tenant === t && !acked.deletes.has(c.uuid));
      if (!mine.length) continue;
      const victim = pick(mine).uuid;
      const res = await call(t.admin, 'DELETE', `/rest/v2/initiatives/${victim}`, undefined);
      if (res && res.status < 300) acked.deletes.add(victim), count('delete');
      else if (!res) deletesUnanswered.add(victim), count('delete unanswered');
    } else if (r < 0.8) {
      // Deleting a team goals may be referencing concurrently: refused (has_dependents) or clean, never dangling.
      const res = await call(t.admin, 'DELETE', `/rest/v2/teams/${t.spareTeam}`, undefined);
      if (res) count(`team delete ${res.status}`);
    } else {
      const m = pick(t.members);
      const res = await call(m.token, 'POST', `/documents/${pick(t.docs)}/access_requests`, {
        requested_level: pick(['view', 'comment', 'edit', 'manage']),
      });
      if (res?.status === 200 && res.body.data.record)
        acked.requests.push({ tenant: t, uuid: res.body.data.record.uuid, outcome: res.body.data.outcome }), count('access request');
    }
  }
}

// ---------- the data source ----------

/**
 * The JSON server's answers: streaks of good answers and of failures in turn (lengths cycling through these), so
 * about half the requests fail and the source sees FAILURES_BEFORE_FAILING failures in a row early in the run
 * (its 2nd streak: 11), then recovers. A failure is a 503 or no answer at all (the sync's timeout), in turn. A
 * good answer's value moves every other time: runs that write a check-in and runs that find the value unchanged.
 */
const OK_STREAKS = [2, 3, 1, 6, 5, 11];
const FAIL_STREAKS = [FAILURES_BEFORE_FAILING + 1, 2, 1, 4, 3, 7];
const feed = { failing: false, left: OK_STREAKS[0]!, streaks: 0, fails: 0, oks: 0 };
function syncAnswer(): JsonAnswer {
  if (feed.left === 0) {
    feed.failing = !feed.failing;
    feed.streaks++;
    feed.left = (feed.failing ? FAIL_STREAKS : OK_STREAKS)[Math.floor(feed.streaks / 2) % OK_STREAKS.length]!;
  }
  feed.left--;
  if (feed.failing) return feed.fails++ % 2 ? 'hang' : { status: 503, body: { error: 'unavailable' } };
  return { status: 200, body: { data: { total: 10 + Math.floor(feed.oks++ / 2) } } };
}

interface Synced {
  tenant: Tenant;
  source: string;
  goal: string;
  /** Runs the syncer asked for (POST /sync answered 202), in order; the kill's index among them. */
  runs: string[];
  runsBeforeKill: number;
  /** POST /sync never answered: a run may exist that no answer named. */
  lost: number;
}
let synced: Synced | undefined;

async function setupDataSource(t: Tenant, url: string): Promise<Synced> {
  const must = async (path: string, body: unknown) => {
    const r = await call(t.admin, 'POST', path, body);
    if (r?.status !== 201) throw new Error(`POST ${path}: ${r?.status} ${JSON.stringify(r?.body)}`);
    return r.body.data.record;
  };
  const goal = await must('/rest/v2/key_results', {
    title: 'Synced',
    time_period_uuid: t.period,
    metric: { start_value: 0, target_value: 1000, metric_type: 'reach' },
  });
  // the period is long: the schedule never runs it during the run, only the syncer's runs do (so they never overlap)
  const source = await must('/data_sources', {
    goal_uuid: goal.uuid,
    name: 'Chaos feed',
    kind: 'http_json',
    config: { url, json_pointer: '/data/total', every_minutes: 1440 },
  });
  return { tenant: t, source: source.uuid, goal: goal.uuid, runs: [], runsBeforeKill: 0, lost: 0 };
}

/**
 * One run after another: each asked for once the one before is in the sync log (or a minute passed). Runs go on
 * after the clients stop until the feed has been through its long failing streak and answered again (a loaded
 * machine runs few syncs in the writing time), for at most a minute more.
 */
async function syncer(s: Synced): Promise<void> {
  const more = () => stoppedAt === undefined || (feed.streaks < 2 && Date.now() < stoppedAt + 60_000);
  while (more()) {
    const res = await call(s.tenant.admin, 'POST', `/data_sources/${s.source}/sync`);
    if (!res) {
      s.lost++;
      continue;
    }
    if (res.status !== 202) {
      runViolations.push(`POST /data_sources/${s.source}/sync: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      await sleep(1000);
      continue;
    }
    const run = res.body.data.record.run as string;
    s.runs.push(run);
    if (!killWindow) s.runsBeforeKill = s.runs.length;
    count('data-source sync');
    const want = runUuid(s.source, run, 'sync');
    const deadline = Date.now() + 60_000;
    for (;;) {
      const log = await call(s.tenant.admin, 'GET', `/data_sources/${s.source}/syncs?per_page=5`);
      if (log?.status === 200 && log.body.data.records.some((r: any) => r.uuid === want)) break;
      if (Date.now() > deadline) {
        runViolations.push(`data-source run ${run}: not in the sync log a minute after it was asked for`);
        break;
      }
      await sleep(150);
    }
  }
}

/**
 * The data source's invariants, from its sync log: every run asked for logged once; every check-in of its goal
 * written by one succeeded run, with the id derived from the source and that run (so a run replayed after the
 * kill found its check-in instead of writing a second); the goal at the last good sync's value; the source's
 * status, last value and last error what its log gives (`failing` from the 10th failure in a row to the next
 * success), with one e-mailed notice each time it turned failing.
 */
async function verifySync(
  s: Synced,
  goals: Map<string, any>,
  checkins: any[],
  check: (ok: boolean, what: string) => void,
  add: (k: string, n?: number) => void,
) {
  const t = s.tenant;
  const log: any[] = await all(t.admin, `/data_sources/${s.source}/syncs`);
  const source = (await call(t.admin, 'GET', `/data_sources/${s.source}`))?.body?.data?.record;
  const runOf = new Map(s.runs.map((r) => [runUuid(s.source, r, 'sync'), r]));
  const logged = new Map<string, any>();
  for (const e of log) {
    check(!logged.has(e.uuid), `data-source sync ${e.uuid} logged twice`);
    logged.set(e.uuid, e);
  }
  for (const r of s.runs) check(logged.has(runUuid(s.source, r, 'sync')), `data-source run ${r}: never logged`);
  const strays = log.filter((e) => !runOf.has(e.uuid));
  check(strays.length <= s.lost, `data-source syncs [${strays.map((e) => e.uuid)}] of no run asked for (${s.lost} asks unanswered)`);
  add('data-source runs logged', log.length);

  // at most one check-in per run: each named by exactly one logged run, with the id that run derives
  const mine = checkins.filter((c) => c.goal_uuid === s.goal);
  for (const c of mine) {
    const by = log.filter((e) => e.checkin_uuid === c.uuid);
    check(
      c.source === 'data_source' && c.data_source_uuid === s.source,
      `check-in ${c.uuid} on the synced goal: source ${c.source}, data source ${c.data_source_uuid}`,
    );
    check(by.length === 1, `data-source check-in ${c.uuid} (value ${c.value}): named by ${by.length} logged runs`);
    const run = by[0] && runOf.get(by[0].uuid);
    if (run) check(c.uuid === runUuid(s.source, run, 'checkin'), `data-source check-in ${c.uuid}: not the id its run ${run} derives`);
    if (by[0])
      check(
        by[0].status === 'succeeded' && by[0].value === c.value,
        `data-source check-in ${c.uuid}: its run says ${by[0].status} ${by[0].value}`,
      );
    add('data-source check-ins checked');
  }
  const written = new Set(mine.map((c) => c.uuid));
  for (const e of log.filter((e) => e.checkin_uuid))
    check(written.has(e.checkin_uuid), `data-source sync ${e.uuid}: its check-in ${e.checkin_uuid} is missing`);

  // the log in the order it was written (runs never overlap: one asked for once the one before is logged)
  const ordered = [...log].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  let failures = 0;
  let status = 'active';
  const turnedFailing: string[] = [];
  for (const e of ordered) {
    if (e.status !== 'failed') {
      failures = 0;
      status = 'active';
    } else if (++failures >= FAILURES_BEFORE_FAILING && status !== 'failing') {
      status = 'failing';
      turnedFailing.push(e.at);
    }
  }
  const last = ordered.at(-1);
  const good = ordered.filter((e) => e.status !== 'failed').at(-1);
  check(
    source?.status === status,
    `data source: status ${source?.status}, its log gives ${status} (${failures} failures in a row at its end)`,
  );
  check(source?.last_value === (good?.value ?? null), `data source: last_value ${source?.last_value}, its last good sync ${good?.value}`);
  check(
    source?.last_error === (last?.status === 'failed' ? last.error : null),
    `data source: last_error ${source?.last_error}, its last sync ${last?.status} ${last?.error}`,
  );
  if (good)
    check(
      goals.get(s.goal)?.current_value === good.value,
      `synced goal: value ${goals.get(s.goal)?.current_value}, its source's last good sync ${good.value}`,
    );
  const notes = (await all(t.admin, '/notifications')).filter(
    (n: any) => n.kind === DATA_SOURCE_FAILING_KIND && n.subject_uuid === s.source,
  );
  const want = turnedFailing.map((at) => failingNoticeUuid(s.source, at));
  check(
    notes.length === want.length && want.every((u) => notes.some((n: any) => n.uuid === u && n.email_sent_at)),
    `data source turned failing at [${turnedFailing}]: notices [${notes.map((n: any) => `${n.created_at} e-mailed ${n.email_sent_at}`)}]`,
  );
  add('data-source failing turns', turnedFailing.length);
  // too few runs prove nothing: runs on both sides of the kill, check-ins written, failures, the failing state and back
  check(
    s.runsBeforeKill > 0 && s.runs.length > s.runsBeforeKill,
    `data-source runs: ${s.runsBeforeKill} before the kill, ${s.runs.length - s.runsBeforeKill} after`,
  );
  const outcome = (what: string, n: number) => (add(`data-source syncs ${what}`, n), n);
  const errors = log.filter((e) => e.status === 'failed').map((e) => String(e.error));
  check(
    outcome('succeeded', log.filter((e) => e.status === 'succeeded').length) > 0 &&
      outcome('unchanged', log.filter((e) => e.status === 'unchanged').length) > 0 &&
      outcome('failed', errors.length) > 0 &&
      errors.includes('HTTP 503') &&
      errors.some((e) => e.startsWith('no answer within')) &&
      turnedFailing.length > 0 &&
      ordered.some((e) => e.at > turnedFailing[0]! && e.status !== 'failed'),
    `too few data-source syncs to prove anything: ${log.length} logged, errors [${[...new Set(errors)].slice(0, 4)}], turned failing ${turnedFailing.length} times`,
  );
}

// ---------- verification ----------

const violations: string[] = [];
const check = (ok: boolean, what: string) => {
  if (!ok) violations.push(what);
};

async function goalsOf(t: Tenant) {
  const goals = new Map<string, any>();
  for (const kind of ['objectives', 'key_results', 'initiatives'])
    for (const g of await all(t.admin, `/rest/v2/${kind}`)) goals.set(g.uuid, g);
  return goals;
}

/** The goal's record as the checks' pure functions take it: the API presents the metric as `target`/`metric_type` only, and every metric chaos creates starts at 0. */
const asRecord = (g: any): GoalRecord => ({
  ...g,
  metric: g.metric_type ? { uuid: '', name: null, start_value: 0, target_value: g.target, unit: g.unit, metric_type: g.metric_type } : null,
});
/** A check-in as the API presents it, as a record: chaos never updates a check-in, so its last writer is its creator. */
const asCheckin = (c: any): CheckinRecord => ({ ...c, updated_by_uuid: c.creator_uuid });

async function verify(tenants: Tenant[]): Promise<Record<string, number>> {
  const stats: Record<string, number> = {};
  const add = (k: string, n = 1) => (stats[k] = (stats[k] ?? 0) + n);
  for (const t of tenants) {
    const goals = await goalsOf(t);
    const discarded = new Map((await all(t.admin, '/rest/v2/initiatives?q[discarded_at_not_null]=1')).map((g: any) => [g.uuid, g]));
    const checkins = await all(t.admin, '/rest/v2/checkins');
    const byUuid = new Map(checkins.map((c: any) => [c.uuid, c]));
    // every acknowledged write readable
    for (const c of acked.checkins.filter((c) => c.tenant === t))
      check(byUuid.has(c.uuid), `acknowledged check-in ${c.uuid} missing`), add('acknowledged check-ins');
    const ackedIds = acked.checkins.filter((c) => c.tenant === t).map((c) => c.uuid);
    check(new Set(ackedIds).size === ackedIds.length, 'one acknowledged check-in answered twice with different requests');
    // Applied once: each Idempotency-Key left exactly one record (the acknowledged one), none when refused, at
    // most one when its answer was lost; the key is in the record (check-in note, goal title), so a duplicate
    // cannot hide behind another lost request.
    const keyedRecords = (records: Iterable<any>, field: string) => {
      const out = new Map<string, string[]>();
      for (const r of records) {
        const key = markerOf(r[field]);
        if (key !== undefined) out.set(key, [...(out.get(key) ?? []), r.uuid]);
      }
      return out;
    };
    const appliedOnce = (what: string, sent: Map<string, Keyed>, found: Map<string, string[]>) => {
      for (const [key, k] of sent) {
        if (k.tenant !== t) continue;
        const uuids = found.get(key) ?? [];
        found.delete(key);
        if (k.uuid) check(uuids.length === 1 && uuids[0] === k.uuid, `${what} key ${key}: acknowledged as ${k.uuid}, records [${uuids}]`);
        else if (k.answer === 'lost') check(uuids.length <= 1, `${what} key ${key} (answer lost): ${uuids.length} records [${uuids}]`);
        else check(uuids.length === 0, `${what} key ${key}: answered ${k.answer} yet records [${uuids}]`);
        add(`${what} idempotency keys checked`);
      }
      for (const [key, uuids] of found) check(false, `${what} records [${uuids}] carry key ${key}, never sent by this tenant`);
    };
    appliedOnce('check-in', keyed.checkins, keyedRecords(checkins, 'note'));
    appliedOnce('create', keyed.creates, keyedRecords([...goals.values(), ...discarded.values()], 'title'));
    for (const c of acked.creates.filter((c) => c.tenant === t && !acked.deletes.has(c.uuid))) {
      check(goals.has(c.uuid) || deletesUnanswered.has(c.uuid), `acknowledged create ${c.uuid} missing`);
      add('acknowledged creates');
    }
    // every acknowledged delete: read back as discarded (contract 6: a soft delete; a discarded goal is
    // left out of lists), or 404
    for (const c of acked.creates.filter((c) => c.tenant === t && acked.deletes.has(c.uuid))) {
      const res = await call(t.admin, 'GET', `/rest/v2/initiatives/${c.uuid}`);
      check(
        (res?.status === 200 && !!res.body.data.record.discarded_at) || res?.status === 404,
        `acknowledged delete of ${c.uuid}: GET answers ${res?.status} discarded_at ${res?.body?.data?.record?.discarded_at}`,
      );
      check(!goals.has(c.uuid), `acknowledged delete of ${c.uuid}: still listed`);
      check(discarded.has(c.uuid) || res?.status === 404, `acknowledged delete of ${c.uuid}: not listed as discarded`);
      add('acknowledged deletes');
    }
    // every acknowledged re-parenting in place: the last acknowledged parent (or one of a later unanswered
    // move) is the goal's only parent, and its path is its parent's path and itself
    for (const c of acked.creates.filter((c) => c.tenant === t && !acked.deletes.has(c.uuid) && goals.has(c.uuid))) {
      const g = goals.get(c.uuid);
      const want = parentOf.get(c.uuid)!;
      const has = (g.parent_links ?? []).map((l: any) => l.parent_uuid as string);
      check(
        has.length === 1 && (has[0] === want.parent || want.maybe.has(has[0])),
        `goal ${c.uuid}: parents [${has}], last acknowledged parent ${want.parent} (after ${want.moves} acknowledged moves${want.maybe.size ? `; unanswered since: ${[...want.maybe]}` : ''})`,
      );
      add('acknowledged parents checked');
      if (want.moves) add('acknowledged re-parentings checked');
    }
    for (const g of goals.values()) {
      const first = goals.get(g.parent_links?.[0]?.parent_uuid);
      check(
        g.path === pathFor(g.uuid, first) && (!g.parent_links?.length || !!first),
        `goal ${g.uuid}: path ${g.path}, first parent ${first?.uuid} at ${first?.path}`,
      );
      add('paths checked');
    }
    // every goal follows its latest check-in (value, progress, status, ...: decide.ts goalRepair finds nothing to repair)
    const latest = new Map<string, CheckinRecord>();
    for (const c of checkins.map(asCheckin)) {
      const cur = latest.get(c.goal_uuid);
      if (!cur || checkinOrderKey(c) > checkinOrderKey(cur)) latest.set(c.goal_uuid, c);
    }
    const now = new Date().toISOString();
    for (const g of goals.values()) {
      const rec = asRecord(g);
      const next = goalRepair(rec, latest.get(g.uuid), now);
      // the fields goalRepair moved (a new record spread from `rec`: every other field is the same value)
      const off = next ? (Object.keys(next) as Array<keyof GoalRecord>).filter((k) => k !== 'updated_at' && next[k] !== rec[k]) : [];
      check(off.length === 0, `goal ${g.uuid}: ${off.map((k) => `${k} ${g[k]}, latest check-in gives ${next?.[k]}`).join('; ')}`);
      add('goals following their latest check-in');
    }
    // rollups: every rollup goal's progress is the rollup of its counted children (progress.ts)
    const live = [...goals.values()].filter((g) => !g.discarded_at);
    for (const p of live.filter((g) => g.progress_mode === 'rollup')) {
      const children = live.filter((c) => (c.parent_links ?? []).some((l: any) => l.parent_uuid === p.uuid)).map(asRecord);
      const want = aggregateProgress(aggregateOf(p.uuid, children));
      check(p.current_progress === want, `rollup ${p.uuid}: progress ${p.current_progress}, its ${children.length} children give ${want}`);
      add('rollup goals checked');
    }
    // no cycle
    const parents = new Map(live.map((g) => [g.uuid as string, (g.parent_links ?? []).map((l: any) => l.parent_uuid as string)]));
    const state = new Map<string, number>();
    const cyclic = (id: string): boolean => {
      if (state.get(id) === 1) return true;
      if (state.get(id) === 2) return false;
      state.set(id, 1);
      const found = (parents.get(id) ?? []).some(cyclic);
      state.set(id, 2);
      return found;
    };
    check(![...parents.keys()].some(cyclic), `tenant ${t.id}: a cycle in the goal hierarchy`);
    // no reference to a deleted period or team
    const teams = new Set((await all(t.admin, '/rest/v2/teams')).map((x: any) => x.uuid));
    const periods = new Set((await all(t.admin, '/rest/v2/time_periods')).map((x: any) => x.uuid));
    for (const g of live) {
      check(periods.has(g.time_period_uuid), `goal ${g.uuid} references deleted period ${g.time_period_uuid}`);
      for (const team of g.team_uuids ?? []) check(teams.has(team), `goal ${g.uuid} references deleted team ${team}`);
    }
    // every acknowledged change produced its event, at this tenant's receiver only, signed
    const events = delivered.get(t.name) ?? [];
    const heard = new Set(events.map((e) => `${e.type}#${e.uuid}`));
    const killedAt = killWindow ? new Date(killWindow.from).toISOString() : '';
    for (const c of acked.checkins.filter((c) => c.tenant === t)) {
      check(
        heard.has(`checkin.created#${c.uuid}`),
        `check-in ${c.uuid} (created ${byUuid.get(c.uuid)?.created_at}, kill at ${killedAt}): no checkin.created event delivered`,
      );
      add('check-in events checked');
    }
    for (const c of acked.creates.filter((c) => c.tenant === t))
      check(heard.has(`goal.created#${c.uuid}`), `create ${c.uuid}: no goal.created event delivered`), add('create events checked');
    const foreign = events.filter((e) => e.tenant !== t.id);
    check(foreign.length === 0, `tenant ${t.name}: ${foreign.length} events of another tenant delivered to its endpoint`);
    const unsigned = events.filter((e) => !e.signed);
    check(unsigned.length === 0, `tenant ${t.name}: ${unsigned.length} deliveries with a wrong signature`);
    add('webhook deliveries received', events.length);
    if (violations.some((v) => v.includes('event delivered'))) {
      const log = await all(t.admin, `/webhooks/${hooks.get(t.name)}/deliveries`);
      const byStatus = new Map<string, number>();
      for (const d of log)
        byStatus.set(
          `${d.event_type} ${d.status} attempts=${d.attempts} ${d.last_error ?? ''}`,
          (byStatus.get(`${d.event_type} ${d.status} attempts=${d.attempts} ${d.last_error ?? ''}`) ?? 0) + 1,
        );
      deliveryLogs.set(t.name, [...byStatus].map(([k, v]) => `${v}x ${k}`).join('; '));
    }
    add('webhook deliveries received more than once (at least once)', events.length - new Set(events.map((e) => e.id)).size);
    if (synced?.tenant === t) await verifySync(synced, goals, checkins, check, add);
    // every acknowledged access request notified (in-app) and e-mailed
    const notes = await all(t.owner.token, '/notifications');
    const notified = new Map(notes.map((n: any) => [n.subject_uuid, n]));
    for (const r of acked.requests.filter((r) => r.tenant === t && r.outcome === 'created')) {
      const n = notified.get(r.uuid);
      check(!!n, `access request ${r.uuid} not notified`);
      check(!!n?.email_sent_at, `access request ${r.uuid}: notice not e-mailed`);
      add('access requests notified');
    }
  }
  return stats;
}

/**
 * Verifies until every invariant holds. Derived state converges at the speed of the change stream, which on a
 * loaded machine lags: so the wait is bounded by progress (no fewer violations for `stallMs`), and by `capMs`.
 */
async function eventuallyVerified(tenants: Tenant[], stallMs: number, capMs: number) {
  const start = Date.now();
  let fewest = Infinity;
  let improvedAt = start;
  for (;;) {
    violations.length = 0;
    const stats = await verify(tenants);
    if (fewest === Infinity && violations.length)
      say(`waiting for ${violations.length} violation(s) to clear, e.g. ${violations.slice(0, 3).join(' | ')}`);
    if (violations.length < fewest) [fewest, improvedAt] = [violations.length, Date.now()];
    if (!violations.length || Date.now() - improvedAt > stallMs || Date.now() - start > capMs) return stats;
    await sleep(1000);
  }
}

function deadLetters(): Array<{ queue: string }> {
  const f = join(dataDir, 'dead-letters.jsonl');
  return existsSync(f)
    ? readFileSync(f, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
}

/** The worst the stack's stats showed (every stack process of the run): stream lag, and per queue its oldest message and most messages. */
const worst = { streamLagMs: 0, streamLagAt: '', queues: new Map<string, { ageMs: number; pending: number }>() };

function lookAtStats(): void {
  for (const st of readStackStats(dataDir)) {
    if (st.stream.maxLagMs > worst.streamLagMs) [worst.streamLagMs, worst.streamLagAt] = [st.stream.maxLagMs, st.stream.maxLagAt];
    for (const [q, v] of Object.entries(st.queues)) {
      const w = worst.queues.get(q) ?? { ageMs: 0, pending: 0 };
      worst.queues.set(q, { ageMs: Math.max(w.ageMs, v.oldestAgeMs), pending: Math.max(w.pending, v.pending) });
    }
  }
}

/** Every second the stats are read; every 30 s the latest are printed (a soak shows how the stack keeps up as it goes). */
function monitor(): () => void {
  let n = 0;
  const timer = setInterval(() => {
    lookAtStats();
    if (++n % 30) return;
    const now = readStackStats(dataDir).at(-1);
    if (!now) return;
    const qs = Object.entries(now.queues)
      .filter(([, v]) => v.pending)
      .map(([q, v]) => `${q} ${v.pending} (oldest ${Math.round(v.oldestAgeMs / 1000)} s)`);
    say(
      `stream lag at most ${Math.round(worst.streamLagMs / 1000)} s so far; queues: ${qs.join(', ') || 'empty'}; ${arrivals.length} deliveries received`,
    );
  }, 1000);
  timer.unref();
  return () => clearInterval(timer);
}

/** The most deliveries the receiver took in any `windowMs`, per second. */
function peakRate(times: number[], windowMs: number): number {
  const t = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < t.length; i++) {
    while (t[i]! - t[j]! >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most / (windowMs / 1000);
}

async function main(): Promise<number> {
  port = await freePort();
  say(`data in ${dataDir}; API on ${base()}; ${CLIENTS} clients for ${DURATION_MS / 1000} s${FAITHFUL ? '; AWS-faithful mode' : ''}`);
  await startStack(true);
  const stackInfo = JSON.parse(readFileSync(join(dataDir, 'stack.json'), 'utf8'));
  Object.assign(process.env, {
    TABLE_NAME: stackInfo.tableName,
    DYNAMODB_ENDPOINT: stackInfo.dynamoEndpoint,
    ISSUER_URL: stackInfo.issuer,
    ISSUER_KEY_FILE: join(dataDir, 'issuer-key.json'),
    DATA_DIR: dataDir,
    AWS_REGION: 'us-east-1',
  });
  const { runAdmin } = await import('./lib/admin-commands.ts');
  const receiver = await startReceiver();
  const tenants = [await setupTenant(runAdmin, 'Chaos A', receiver), await setupTenant(runAdmin, 'Chaos B', receiver)];
  const feedServer = await startJsonSource(syncAnswer);
  synced = await setupDataSource(tenants[0]!, feedServer.url);
  say('tenants ready; writing');

  const stopMonitor = monitor();
  const writingFrom = Date.now();
  const clients = [...Array.from({ length: CLIENTS }, (_, i) => client(tenants[i % 2]!)), syncer(synced)];
  await sleep(DURATION_MS * 0.4);
  const beforeKill = acked.checkins.length;
  say('SIGKILL of the whole stack');
  killWindow = { from: Date.now(), to: Infinity };
  killStack();
  await sleep(1000);
  await startStack(true);
  // The DynamoDB Local endpoint moved: operator commands in this process follow it.
  process.env.DYNAMODB_ENDPOINT = JSON.parse(readFileSync(join(dataDir, 'stack.json'), 'utf8')).dynamoEndpoint;
  killWindow.to = Date.now() + 2000;
  say(`restarted on the same data (${beforeKill} check-ins acknowledged before the kill)`);
  await sleep(DURATION_MS * 0.6);
  stoppedAt = Date.now();
  await Promise.all(clients);
  if (beforeKill === 0 || acked.checkins.length === beforeKill)
    runViolations.push(
      `too few acknowledged writes to prove anything: ${beforeKill} check-ins before the kill, ${acked.checkins.length - beforeKill} after`,
    );
  // The delete and re-parenting checks prove nothing unless some were acknowledged (a re-parented goal left standing).
  if (!acked.deletes.size || !acked.creates.some((c) => !acked.deletes.has(c.uuid) && parentOf.get(c.uuid)!.moves > 0))
    runViolations.push(
      `too few acknowledged writes to prove anything: ${acked.deletes.size} deletes, ${counts.get('re-parent') ?? 0} re-parentings`,
    );
  say(`writes done: ${[...counts].map(([k, v]) => `${k} ${v}`).join(', ')}`);
  if (unanswered.size) say(`unanswered, by last failure: ${[...unanswered].map(([k, v]) => `${v}x ${k}`).join('; ')}`);

  // The worker is fixed: a clean restart without the fault, then the dead letters are replayed. First the
  // faulty worker's retries (0.5 + 1 + 2 + 4 s back-off) run out into the dead-letter store; on a loaded machine
  // the stream may still be catching up with the access requests, so wait for their first dead letter.
  const faultDeadline = Date.now() + 90_000;
  while (!deadLetters().some((l) => l.queue === ACCESS_QUEUE) && Date.now() < faultDeadline) await sleep(1000);
  await sleep(8_000);
  await stopStack();
  await startStack(false);
  process.env.DYNAMODB_ENDPOINT = JSON.parse(readFileSync(join(dataDir, 'stack.json'), 'utf8')).dynamoEndpoint;
  const letters = deadLetters();
  say(`dead letters before redrive: ${letters.length} (${letters.filter((l) => l.queue === ACCESS_QUEUE).length} from the failing worker)`);
  if (!letters.some((l) => l.queue === ACCESS_QUEUE))
    runViolations.push('the failing worker dead-lettered nothing: the fault injection did not run');
  const redriven = await runAdmin(['redrive']);
  say(`redrive: ${JSON.stringify(redriven)}`);

  const verifyFrom = Date.now();
  const stats = await eventuallyVerified(tenants, 60_000, 300_000);
  say(`verified in ${Math.round((Date.now() - verifyFrom) / 1000)} s (derived state converging)`);
  stopMonitor();
  lookAtStats();
  // every event reached its receiver once verified: the events the writes produced, per second of writing
  const events = new Set([...delivered.values()].flatMap((l) => l.map((e) => e.id))).size;
  const writingSeconds = (stoppedAt! - writingFrom) / 1000;
  say(
    `events: ${events} in ${Math.round(writingSeconds)} s of writing (${(events / writingSeconds).toFixed(1)}/s); deliveries received: ${arrivals.length}, at most ${peakRate(arrivals, 10_000).toFixed(1)}/s over 10 s`,
  );
  say(
    `stream lag at most ${Math.round(worst.streamLagMs / 1000)} s (${worst.streamLagAt}; bound ${STREAM_LAG_BOUND_MS / 1000} s); oldest queue message: ${[...worst.queues].map(([q, w]) => `${q} ${Math.round(w.ageMs / 1000)} s (at most ${w.pending} messages)`).join(', ')} (bound ${QUEUE_AGE_BOUND_MS / 1000} s)`,
  );
  check(
    worst.streamLagMs <= STREAM_LAG_BOUND_MS,
    `the change stream fell ${worst.streamLagMs} ms behind (${worst.streamLagAt}): over ${STREAM_LAG_BOUND_MS} ms`,
  );
  for (const [q, w] of worst.queues)
    check(w.ageMs <= QUEUE_AGE_BOUND_MS, `queue ${q}: a message waited ${w.ageMs} ms, over contract 14's ${QUEUE_AGE_BOUND_MS} ms`);
  violations.push(...runViolations);
  check(deadLetters().length === 0, `dead letters left after redrive: ${deadLetters().length}`);
  const outside = fivexx.filter((e) => !killWindow || e.at < killWindow.from || e.at > killWindow.to);
  check(
    outside.length === 0,
    `5xx outside the kill window: ${outside
      .map((e) => `${e.status} ${e.what}`)
      .slice(0, 5)
      .join('; ')}`,
  );
  for (const [k, v] of Object.entries(stats)) say(`checked: ${k} ${v}`);
  // The AWS-faithful mode proves it ran so (every stack of the run wrote its layer's counts): faults injected and
  // stale reads served, each above 0 unless AWS_FAITHFUL_FAULT_RATE / AWS_FAITHFUL_STALE_MS turn it off; without
  // the mode, no layer at all.
  const faithful = readFaithfulCounts(dataDir);
  if (FAITHFUL) {
    for (const line of describeFaithfulCounts(faithful ?? { faults: {}, reads: {}, stale: {} }).split('\n')) say(line);
    for (const problem of faithfulProblems(faithful, faithfulExpectation())) check(false, `--aws-faithful: ${problem}`);
  } else check(faithful === undefined, 'a stack without --aws-faithful ran the AWS-faithful layer');
  say(`5xx inside the kill window: ${fivexx.length - outside.length}, outside: ${outside.length}`);
  if (violations.length) {
    for (const v of violations.slice(0, 50)) console.error(`VIOLATION: ${v}`);
    for (const [name, log] of deliveryLogs) console.error(`tenant ${name} delivery log: ${log}`);
    console.error(`${violations.length} violation(s)`);
    return 1;
  }
  say('all invariants hold');
  return 0;
}

// Never leave the stack behind: it runs in its own process group.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => (killStackQuietly(), process.exit(130)));
process.on('exit', () => killStackQuietly());
function killStackQuietly() {
  try {
    killStack();
  } catch {
    /* already gone */
  }
}

let code = 1;
try {
  code = await main();
} catch (err) {
  console.error((err as Error).stack ?? err);
} finally {
  await stopStack().catch(() => undefined);
  if (!values.keep) rmSync(dataDir, { recursive: true, force: true });
}
process.exit(code);
