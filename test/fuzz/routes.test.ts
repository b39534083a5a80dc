import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '#shared/openapi.ts';
import { PREDICATES } from '#shared/list/filter.ts';
import { routes, type Route } from '#shared/routes/index.ts';
import { Api, newTenant, type Res, type TenantFixture } from '../support/api.ts';
import { eventually } from '../support/eventually.ts';
import {
  bodyTextArb,
  hugeBodyArb,
  hugeNumber,
  hugeString,
  HOSTILE_STRINGS,
  PROTOTYPE_NAMES,
  uuidArb,
  WORST_NUMBER,
  type Env,
  type HugeKind,
  type Schema,
} from './arbitraries.ts';

/**
 * Schema-driven fuzzing of every route of the route table through the local stack (docs/architecture.md,
 * "Hostile input"). Bodies, path ids and query strings are drawn from the request schemas of the OpenAPI
 * document (built from the zod schemas that validate requests), valid and broken, by callers of each role.
 * Every answer must be:
 *  - below 500;
 *  - described by docs/openapi.json: a 2xx body matches the route's response schema, every 4xx is in the
 *    contract's error shape (the Api client checks both on every request, test/support/openapi-responses.ts);
 *  - and a refused write changes nothing: what a read of the written resource (or its collection) answers
 *    is the same before and after.
 * Then, per route, requests whose size is the attack: a 100,000-digit number or a long zero run before a digit
 * in the body (always 422 invalid_number), a long run of one character, arrays or objects nested 20,000 deep,
 * or long digit runs and strings in the query or a path id; each answered below 500, within HUGE_ANSWER_RATIO
 * times a tiny request's answer to the same route measured just before it, and a refused write changes nothing.
 * FUZZ_RUNS sets the cases per route (default 30: about 2,400 cases), FUZZ_HUGE_RUNS the huge ones (default
 * 8); FUZZ_SEED replays a run (the seed is printed when a property fails, and at the start); FUZZ_DEBUG_RATIO
 * prints the huge requests with the highest ratios to their floor.
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? 30);
const HUGE_RUNS = Number(process.env.FUZZ_HUGE_RUNS ?? 8);
/**
 * How many times a tiny request's time (the same route and caller, asked just before) a huge one may take: a
 * ratio to a floor measured in the same run, so a loaded machine slows both. A refused huge body took up to
 * about 10 tiny requests' time here; the quadratic zero trim of issue 25 took seconds, hundreds of them.
 */
const HUGE_ANSWER_RATIO = 40;
/** The floor's least value: a tiny request answered in 1 ms would otherwise leave a huge one's transfer no room. */
const FLOOR_MIN_MS = 5;
/** Query values and path ids stay under the local stack's 16 KB header limit, so the service answers, not the size check. */
const HUGE_URL_SIZES = [65, 2_000, 10_000];
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
console.log(`route fuzz: ${RUNS} runs per route, seed ${SEED} (FUZZ_SEED=${SEED} replays it)`);

const doc = buildOpenApiDocument() as unknown as {
  paths: Record<string, Record<string, Schema>>;
  components: { schemas: Record<string, Schema> };
};
const resolve = (ref: string) => doc.components.schemas[ref.replace('#/components/schemas/', '')]!;
const bodySchemaOf = (r: Route): Schema | undefined =>
  doc.paths[r.path]?.[r.method.toLowerCase()]?.requestBody?.content?.['application/json']?.schema;

/** Where a receiver could be, for the webhook bodies (the local stack accepts http on 127.0.0.1; port 9 refuses). */
const WEBHOOK_URL = 'http://127.0.0.1:9/hook';
/** The shareable types' path prefixes (a path id of their routes names its own type first). */
const SHAREABLE_PATHS = ['/documents/', '/okrs-dashboards/', '/explorer-views/', '/playbooks/'];
/** The key suffix of a route's huge-input answers in `seen`. */
const HUGE = ' (huge)';
/**
 * The routes no fuzzed request can succeed on, and why. The coverage test fails for any other route that
 * never answered a 2xx, and for an entry here whose route did.
 */
const NO_2XX: Record<string, string> = {
  'POST /oauth/token': 'fuzzed input holds no client secret (and is JSON: the grant takes a form, test/e2e/service-accounts.test.ts)',
  'POST /data_sources/{id}/sync': 'only an http_json source is fetched, and the fixture is not one (its URL would have to serve JSON)',
  'POST /data_sources/{id}/values': "the credential is the push source's secret, which no fuzzed request holds",
  'POST /mcp': "a fuzzed request is no JSON-RPC call with the transport's Accept (the MCP SDK's client drives it: test/e2e/mcp.test.ts)",
  'GET /mcp': 'a stateless MCP server offers no server-to-client stream: always 405',
  'DELETE /mcp': 'a stateless MCP server has no session to end: always 405',
};

/** Derived fields that the change stream may move between two reads of an unchanged record. */
const DERIVED = new Set([
  'updated_at',
  'current_progress',
  'current_value',
  'current_status',
  'status',
  'last_checkin_date',
  'score',
  'value_updated_at',
  'status_updated_at',
  'value_updated_by_uuid',
  'status_updated_by_uuid',
  'data_sources_count',
  'path',
  'checks',
]);
/** URL-encodes anything, a lone surrogate too (as the raw bytes a client could send: %ED%A0%80 and the like). */
const encode = (v: string) => {
  try {
    return encodeURIComponent(v);
  } catch {
    return encodeURIComponent((v as string & { toWellFormed(): string }).toWellFormed()).replaceAll('%EF%BF%BD', '%ED%A0%80');
  }
};
const stable = (v: unknown): unknown =>
  v && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(
        Object.entries(v)
          .filter(([k]) => !DERIVED.has(k))
          .map(([k, x]) => [k, stable(x)]),
      )
    : v;

/** Whether a JSON text holds a key `__proto__`, `constructor` or `prototype` at any depth (the body read refuses it first). */
function holdsPrototypeKey(text: string): boolean {
  const stack: unknown[] = [JSON.parse(text)];
  while (stack.length) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    for (const [k, x] of Object.entries(v)) {
      if (k === '__proto__' || k === 'constructor' || k === 'prototype') return true;
      stack.push(x);
    }
  }
  return false;
}

describe('route fuzz', () => {
  let t: TenantFixture;
  let other: TenantFixture;
  const callers: Record<string, Api> = {};
  const ids: Record<string, string[]> = {};
  const filterable = new Map<string, string[]>();
  let env: Env;
  /** Answers per route and status: printed at the end, and checked by the last test (every route fuzzed, a 2xx each). */
  const seen = new Map<string, Map<number, number>>();
  const ratios: Array<[number, string]> = [];
  afterAll(() => {
    if (process.env.FUZZ_DEBUG_RATIO) for (const [x, w] of ratios.sort((a, b) => b[0] - a[0]).slice(0, 12)) console.log(x.toFixed(1), w);
  });
  afterAll(() => {
    const lines = [...seen].map(
      ([route, byStatus]) =>
        `${route.padEnd(60)} ${[...byStatus]
          .sort(([a], [b]) => a - b)
          .map(([st, n]) => `${st}×${n}`)
          .join(' ')}`,
    );
    console.log(`route fuzz answers (seed ${SEED}):\n${lines.join('\n')}`);
  });

  beforeAll(async () => {
    [t, other] = await Promise.all([newTenant(), newTenant()]);
    const [member, viewer, spare, spare2] = await Promise.all([
      t.user({ role: 'member' }),
      t.user({ role: 'viewer' }),
      t.user({ role: 'member' }),
      t.user({ role: 'viewer' }),
    ]);
    Object.assign(callers, { admin: t.admin, member: member.api, viewer: viewer.api });
    const a = t.admin;
    const ok = (r: Res, what: string) => {
      if (r.status >= 300) throw new Error(`fixture ${what}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.data?.record ?? r.body;
    };
    const period = ok(await a.post('/rest/v2/time_periods', { name: 'Q1', start_date: '2025-01-01', end_date: '2025-03-31' }), 'period');
    const team = ok(await a.post('/rest/v2/teams', { name: `Team ${randomUUID().slice(0, 6)}`, member_uuids: [member.uuid] }), 'team');
    const group = ok(await a.post('/rest/v2/labels', { name: `Group ${randomUUID().slice(0, 6)}`, is_group: true }), 'label group');
    const label = ok(await a.post('/rest/v2/labels', { name: `Label ${randomUUID().slice(0, 6)}`, parent_uuid: group.uuid }), 'label');
    const objective = ok(
      await a.post('/rest/v2/objectives', { title: 'O', time_period_uuid: period.uuid, owner_uuids: [member.uuid] }),
      'objective',
    );
    const keyResult = ok(
      await a.post('/rest/v2/key_results', {
        title: 'KR',
        time_period_uuid: period.uuid,
        parents: [objective.uuid],
        metric: { target_value: 10 },
      }),
      'key result',
    );
    const initiative = ok(
      await a.post('/rest/v2/initiatives', { title: 'I', time_period_uuid: period.uuid, parents: [keyResult.uuid], visibility: 'limited' }),
      'initiative',
    );
    const checkin = ok(await a.post('/rest/v2/checkins', { goal_uuid: keyResult.uuid, value: 3 }), 'check-in');
    // goals only bodies name (check-ins, data sources, parents): no path id reaches them, so no fuzzed delete or archive
    const kept = await Promise.all(
      ['objectives', 'key_results', 'initiatives'].map(
        async (kind) =>
          ok(
            await member.api.post(`/rest/v2/${kind}`, { title: 'Kept', time_period_uuid: period.uuid, metric: { target_value: 100 } }),
            'kept goal',
          ).uuid as string,
      ),
    );
    const document = ok(await a.post('/documents', { title: 'Doc' }), 'document');
    const dashboard = ok(await member.api.post('/okrs-dashboards', { title: 'Dash' }), 'dashboard');
    const view = ok(await a.post('/explorer-views', { title: 'View' }), 'explorer view');
    const playbook = ok(await member.api.post('/playbooks', { title: 'Playbook' }), 'playbook');
    const dataSource = ok(await a.post('/data_sources', { goal_uuid: keyResult.uuid, name: 'S', kind: 'k' }), 'data source');
    const refresh = await a.post(`/documents/${document.uuid}/refresh`, {});
    // a period and a team no goal is in, for their DELETE routes (bodies name only `period` and `team`: see idsFor)
    const spareTeam = ok(await a.post('/rest/v2/teams', { name: `Spare ${randomUUID().slice(0, 6)}` }), 'team');
    const sparePeriod = ok(
      await a.post('/rest/v2/time_periods', { name: 'Q2', start_date: '2025-04-01', end_date: '2025-06-30' }),
      'period',
    );
    const imported = ok(
      await a.post('/rest/v2/imports', { goals: [{ ref: 'r0', kind: 'objective', title: 'Imported', time_period_uuid: period.uuid }] }),
      'import',
    );
    // a webhook (port 9 of 127.0.0.1 refuses: its deliveries fail) and one delivery of it, of the goal created after it
    const webhook = ok(await a.post('/webhooks', { url: WEBHOOK_URL, events: ['goal.created'] }), 'webhook');
    ok(await a.post('/rest/v2/objectives', { title: 'Delivered', time_period_uuid: period.uuid }), 'delivered goal');
    const delivery = await eventually(async () => {
      const [first] = (await a.get(`/webhooks/${webhook.uuid}/deliveries`)).body.data.records;
      if (!first) throw new Error('no delivery yet');
      return first as { uuid: string };
    });
    // SCIM's own users and teams (its PUT and PATCH replace what they name: no other route's fixture)
    const [scimUsers, scimTeams] = await Promise.all([
      Promise.all([t.user({ role: 'member' }), t.user({ role: 'viewer' })]),
      Promise.all(
        ['A', 'B'].map(async (n) => ok(await a.post('/rest/v2/teams', { name: `SCIM ${n} ${randomUUID().slice(0, 6)}` }), 'team')),
      ),
    ]);
    const serviceAccount = ok(await a.post('/service_accounts', { name: 'Fuzzed', scopes: ['goals:read'] }), 'service account');
    const otherPeriod = ok(
      await other.admin.post('/rest/v2/time_periods', { name: 'X', start_date: '2025-01-01', end_date: '2025-03-31' }),
      'other period',
    );
    // path ids name no caller: a fuzzed update could demote or deactivate the caller of every later case
    Object.assign(ids, {
      user: [spare.uuid, spare2.uuid],
      people: [member.uuid, viewer.uuid, spare.uuid, t.adminUuid],
      team: [team.uuid, spareTeam.uuid],
      label: [label.uuid, group.uuid],
      time_period: [period.uuid, sparePeriod.uuid],
      objective: [objective.uuid],
      key_result: [keyResult.uuid],
      initiative: [initiative.uuid],
      goal: [objective.uuid, keyResult.uuid, initiative.uuid],
      kept,
      checkin: [checkin.uuid],
      'shareable /documents/': [document.uuid, `${t.tenantUuid}_${document.uuid}`],
      'shareable /okrs-dashboards/': [dashboard.uuid],
      'shareable /explorer-views/': [view.uuid, `${t.tenantUuid}_${view.uuid}`],
      'shareable /playbooks/': [playbook.uuid],
      shareable: [
        document.uuid,
        dashboard.uuid,
        view.uuid,
        playbook.uuid,
        `${t.tenantUuid}_${document.uuid}`,
        `${t.tenantUuid}_${view.uuid}`,
      ],
      data_source: [dataSource.uuid, `${t.tenantUuid}_${dataSource.uuid}`],
      thread: refresh.status === 202 ? [refresh.body.thread_uuid] : [],
      import: [imported.uuid],
      webhook: [webhook.uuid],
      delivery: [delivery.uuid],
      service_account: [serviceAccount.uuid],
      foreign: [otherPeriod.uuid, other.adminUuid],
      scim_user: scimUsers.map((u) => u.uuid),
      scim_group: scimTeams.map((x) => x.uuid as string),
    });
    env = {
      resolve,
      dates: [period.start_date, period.end_date, '2025-02-15'],
      urls: [WEBHOOK_URL, 'http://localhost:9/events'],
      // the ids a uuid field of this name names (uuidArb adds random uuids, which name nothing)
      idsFor: (field) => {
        const f = field.replace(/_uuids?$/, '');
        if (f.includes('goal') || f.includes('parent'))
          return [...ids.kept!, ...ids.kept!, ...ids.goal!, ...(f.includes('parent') ? ids.label! : [])];
        if (f.includes('team')) return [team.uuid];
        if (f.includes('time_period')) return [period.uuid];
        if (f.includes('label')) return ids.label!;
        if (f.includes('entity')) return [...ids.people!, ...ids.team!];
        if (/user|owner|member|delegate|manager/.test(f)) return ids.people!;
        return [...ids.foreign!];
      },
    };
    // the filterable attributes of each list, as the service names them when it refuses an unknown one
    for (const r of routes.filter((x) => x.doc.list)) {
      const res = await a.get(`${r.path}?q[no_such_attribute_eq]=1`);
      const names = /filterable: (.*)$/.exec(res.body.error?.details?.[0]?.message ?? '')?.[1]?.split(', ') ?? [];
      filterable.set(r.path, names);
    }
  }, 300_000); // the delivery waits for the change stream

  /** Real ids for a path parameter of this route (the right kind first; others and other tenants' too). */
  function pathIdArb(r: Route, param: string): fc.Arbitrary<string> {
    const kind =
      param === 'delivery_uuid'
        ? 'delivery'
        : r.path.startsWith('/scim/v2/Users/')
          ? 'scim_user'
          : r.path.startsWith('/scim/v2/Groups/')
            ? 'scim_group'
            : r.path.includes('/webhooks/')
              ? 'webhook'
              : r.path.includes('/service_accounts/')
                ? 'service_account'
                : r.path.includes('/imports/')
                  ? 'import'
                  : r.path.includes('/objectives/')
                    ? 'objective'
                    : r.path.includes('/key_results/')
                      ? 'key_result'
                      : r.path.includes('/initiatives/')
                        ? 'initiative'
                        : r.path.includes('/users/')
                          ? 'user'
                          : r.path.includes('/teams/')
                            ? 'team'
                            : r.path.includes('/labels/')
                              ? 'label'
                              : r.path.includes('/time_periods/')
                                ? 'time_period'
                                : r.path.includes('/checkins/')
                                  ? 'checkin'
                                  : r.path.includes('/data_sources/')
                                    ? 'data_source'
                                    : r.path.includes('refresh_threads')
                                      ? 'thread'
                                      : 'shareable';
    // a shareable route's own type first (a document's uuid names no dashboard)
    const own = SHAREABLE_PATHS.find((x) => r.path.startsWith(x));
    const right = kind === 'shareable' && own ? ids[`shareable ${own}`]! : ids[kind]!;
    const wrong = [...ids.goal!, ...ids.foreign!, `${ids.foreign![0]}_${right[0] ?? randomUUID()}`];
    return fc.oneof(
      { arbitrary: right.length ? fc.constantFrom(...right) : fc.uuid(), weight: 6 },
      { arbitrary: right.length ? fc.constantFrom(...right).map((u) => u.toUpperCase()) : fc.uuid(), weight: 1 },
      { arbitrary: fc.constantFrom(...wrong), weight: 1 },
      { arbitrary: fc.uuid(), weight: 1 },
      {
        arbitrary: fc
          .oneof(fc.string({ maxLength: 40 }), fc.constantFrom(...HOSTILE_STRINGS, ...PROTOTYPE_NAMES))
          .filter((s) => s !== '' && s !== '.' && s !== '..'),
        weight: 1,
      },
    );
  }

  /** A query string for a list route: page parameters, filters on its attributes (and made-up ones), a sort. */
  function queryArb(r: Route): fc.Arbitrary<string> {
    if (!r.doc.list) return fc.constantFrom('', '', 'x=1', 'q[__proto___eq]=1');
    const attrs = filterable.get(r.path) ?? [];
    const attr = fc.oneof(
      { arbitrary: attrs.length ? fc.constantFrom(...attrs) : fc.constant('uuid'), weight: 6 },
      { arbitrary: fc.constantFrom(...PROTOTYPE_NAMES, 'no_such'), weight: 1 },
    );
    const value = fc.oneof(
      uuidArb(env, 'goal_uuid'),
      fc.constantFrom('2025-01-01', '2025-02-30', '2025-01-01T00:00:00Z', 'true', '1', '0', 'false', '-1', '1e400', '12.5', 'a,b', ',', ''),
      fc.string({ maxLength: 12 }),
      fc.constantFrom(...HOSTILE_STRINGS.slice(0, 8)),
    );
    const filter = fc
      .tuple(attr, fc.constantFrom(...PREDICATES, 'nope'), fc.boolean(), value)
      .map(([a, p, list, v]) => [`q[${a}_${p}]${list ? '[]' : ''}`, v] as [string, string]);
    const page = fc
      .tuple(
        fc.constantFrom('page', 'per_page', 'limit', 'limit_max', 'offset', 'count'),
        fc.oneof(fc.nat({ max: 200 }).map(String), fc.constantFrom('0', '-1', 'abc', '1000000000', '99999999999999999999', 'true', '')),
      )
      .map(([k, v]) => [k, v] as [string, string]);
    const sort = fc
      .tuple(fc.oneof(attr, fc.constant('created_at')), fc.constantFrom('asc', 'desc', 'DESC', 'Asc', '', 'sideways'))
      .map(([a, d]) => ['q[s]', `${a} ${d}`.trim()] as [string, string]);
    const pair = fc.oneof(
      { arbitrary: filter, weight: 5 },
      { arbitrary: page, weight: 3 },
      { arbitrary: sort, weight: 2 },
      { arbitrary: fc.constantFrom<[string, string]>(['x', '1'], ['q[', '1'], ['q[]', '1'], ['q[a]b', '1']), weight: 1 },
    );
    return fc.array(pair, { maxLength: 4 }).map((pairs) => pairs.map(([k, v]) => `${k}=${encode(v)}`).join('&'));
  }

  /** What a refused write must leave as it was: the record it targets, or its collection's size. */
  async function observe(r: Route, path: string): Promise<unknown> {
    const bare = path.split('?')[0]!;
    const itemPath = bare.replace(/\/(archive|unarchive|grants|access_requests|access_requests\/resend|refresh|rotate_secret)$/, '');
    const targetsItem = itemPath !== bare || r.method !== 'POST';
    const getItem = routes.some(
      (x) => x.method === 'GET' && !x.doc.list && new RegExp(`^${x.path.replace(/\{\w+\}/g, '[^/]+')}$`).test(itemPath),
    );
    if (targetsItem && getItem) {
      const res = await t.admin.get(itemPath);
      return res.status === 200 ? { status: 200, record: stable(res.body.data?.record ?? res.body) } : { status: res.status };
    }
    if (routes.some((x) => x.method === 'GET' && x.path === r.path && x.doc.list))
      return (await t.admin.get(`${bare}?count=true&per_page=1`)).body.data?.pagy?.count;
    return undefined;
  }

  /** Before a route's cases: a fixture an earlier route's cases may have put out of its reach, put back. */
  const RESTORE: Record<string, () => Promise<unknown>> = {
    // a fuzzed PUT /webhooks/{id} may have disabled it, and a disabled endpoint's deliveries are not redelivered (422)
    'POST /webhooks/{id}/deliveries/{delivery_uuid}/redeliver': () =>
      t.admin.put(`/webhooks/${ids.webhook![0]}`, { status: 'active', url: WEBHOOK_URL }).then((r) => expect(r.status).toBe(200)),
  };

  // Deletes last, the table's last first (a check-in before its goal, goals before their period): a fixture a
  // fuzzed delete removes is gone for every later case, so no other route's cases lose their target to one.
  const ordered = [...routes.filter((r) => r.method !== 'DELETE'), ...routes.filter((r) => r.method === 'DELETE').reverse()];
  for (const r of ordered) {
    it(`${r.method} ${r.path}`, async () => {
      await RESTORE[`${r.method} ${r.path}`]?.();
      const bodySchema = bodySchemaOf(r);
      const params = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      const caseArb = fc.record({
        caller: r.auth === 'public' ? fc.constant('none') : fc.constantFrom('admin', 'admin', 'admin', 'member', 'viewer'),
        ids: fc.tuple(...params.map((p) => pathIdArb(r, p))) as fc.Arbitrary<string[]>,
        query: queryArb(r),
        body: r.method === 'GET' ? fc.constant(undefined) : bodyTextArb(bodySchema, env),
      });
      type Case = typeof caseArb extends fc.Arbitrary<infer C> ? C : never;
      const key = `${r.method} ${r.path}`;
      const check = async (c: Case) => {
        let i = 0;
        const path = r.path.replace(/\{\w+\}/g, () => encode(c.ids[i++]!)) + (c.query ? `?${c.query}` : '');
        const api = c.caller === 'none' ? new Api(undefined) : callers[c.caller]!;
        const write = r.method !== 'GET';
        const before = write ? await observe(r, path) : undefined;
        const res = await api.request(r.method, path, c.body, c.body === undefined ? {} : { 'content-type': 'application/json' });
        const counts = seen.get(`${r.method} ${r.path}`) ?? new Map<number, number>();
        seen.set(`${r.method} ${r.path}`, counts.set(res.status, (counts.get(res.status) ?? 0) + 1));
        if (process.env.FUZZ_DEBUG && `${r.method} ${r.path}`.includes(process.env.FUZZ_DEBUG))
          console.log(`${r.method} ${path} ${c.body ?? ''}`.slice(0, 400), '->', res.status, JSON.stringify(res.body).slice(0, 300));
        if (res.status >= 500) throw new Error(`${r.method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
        if (write && res.status >= 400 && ![409, 429].includes(res.status)) {
          const after = await observe(r, path);
          expect(after, `a refused ${r.method} ${path} (${res.status}) changed what it names`).toEqual(before);
        }
      };
      await fc.assert(fc.asyncProperty(caseArb, check), { numRuns: RUNS, seed: SEED, endOnFailure: true });
      // No 2xx yet (a route whose cases rarely pass every rule): more cases, each checked alike, until one, so
      // the coverage test below does not fail on a seed's bad luck
      const succeeded = () => [...(seen.get(key)?.keys() ?? [])].some((status) => status >= 200 && status < 300);
      if (!succeeded())
        await fc.assert(
          fc.asyncProperty(caseArb, async (c) => (succeeded() ? undefined : check(c))),
          { numRuns: 10 * RUNS, seed: SEED + 1, endOnFailure: true },
        );
    }, 300_000);

    it(`${r.method} ${r.path}: huge input is answered quickly`, async () => {
      const bodySchema = bodySchemaOf(r);
      const params = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      // halved until encoded it fits the URL ('é' takes 6 characters there)
      const fitUrl = (v: string): string => (encode(v).length <= 12_000 ? v : fitUrl(v.slice(0, v.length >> 1)));
      const hugeText = fc.oneof(
        hugeNumber(HUGE_URL_SIZES).map((n) => n.text),
        hugeString(HUGE_URL_SIZES).map(fitUrl),
      );
      // one huge place per request: the body or a path id of a write (a write with a real id and a huge query
      // could delete a fixture), the query or a path id of a read
      const places = [r.method === 'GET' ? ('query' as const) : ('body' as const), ...(params.length ? ['path' as const] : [])];
      const caseArb = fc.record({
        caller: r.auth === 'public' ? fc.constant('none') : fc.constantFrom('admin', 'member', 'viewer'),
        place: fc.constantFrom(...places),
        ids: fc.tuple(...params.map((p) => pathIdArb(r, p))) as fc.Arbitrary<string[]>,
        hugeId: hugeText,
        at: fc.nat(),
        query: fc
          .tuple(
            fc.constantFrom(
              'page',
              'per_page',
              'limit',
              'offset',
              'q[s]',
              'q[uuid_eq]',
              'q[created_at_gt]',
              ...(filterable.get(r.path) ?? []).flatMap((a) => [`q[${a}_eq]`, `q[${a}_lt]`, `q[${a}_in][]`]),
            ),
            hugeText,
          )
          .map(([k, v]) => `${k}=${encode(v)}`),
        body: r.method === 'GET' ? fc.constant(undefined) : hugeBodyArb(bodySchema, env),
      });
      type Case = typeof caseArb extends fc.Arbitrary<infer C> ? C : never;
      // every write route first hears the worst number, by a viewer (its body is read before its caller is checked)
      const worst: Case = {
        caller: r.auth === 'public' ? 'none' : 'viewer',
        place: 'body',
        ids: params.map(() => randomUUID()),
        hugeId: '',
        at: 0,
        query: '',
        body: { kind: 'number', text: `{"value":${WORST_NUMBER}}` },
      };
      await fc.assert(
        fc.asyncProperty(caseArb, async (c) => {
          let i = 0;
          const ids = c.place === 'path' ? c.ids.map((id, j) => (j === c.at % c.ids.length ? c.hugeId : id)) : c.ids;
          const path = r.path.replace(/\{\w+\}/g, () => encode(ids[i++]!)) + (c.place === 'query' ? `?${c.query}` : '');
          const body: { kind: HugeKind; text: string } | undefined = c.place === 'body' ? c.body : undefined;
          const api = c.caller === 'none' ? new Api(undefined) : callers[c.caller]!;
          const write = r.method !== 'GET';
          const before = write ? await observe(r, path) : undefined;
          // the floor: the same route and caller with the valid ids and a tiny input (a write's body one byte of
          // broken JSON, refused before anything is written), asked before and after: the slower of the two, so a
          // slow spell of the machine during the huge request is likely in one of them too
          let j = 0;
          const tinyPath = r.path.replace(/\{\w+\}/g, () => encode(c.ids[j++]!));
          const tiny = async () => {
            const t0 = performance.now();
            await api.request(r.method, tinyPath, write ? '{' : undefined, write ? { 'content-type': 'application/json' } : {});
            return performance.now() - t0;
          };
          const floorBefore = await tiny();
          const started = performance.now();
          const res = await api.request(r.method, path, body?.text, body === undefined ? {} : { 'content-type': 'application/json' });
          const ms = performance.now() - started;
          const floorMs = Math.max(FLOOR_MIN_MS, floorBefore, await tiny());
          const what = `${r.method} ${path.slice(0, 120)} ${body ? `(${body.kind}) ${body.text.slice(0, 80)}` : ''} -> ${res.status} in ${Math.round(ms)} ms (a tiny request: ${Math.round(floorMs)} ms)`;
          if (process.env.FUZZ_DEBUG_RATIO) ratios.push([ms / floorMs, what]);
          const counts = seen.get(`${r.method} ${r.path}${HUGE}`) ?? new Map<number, number>();
          seen.set(`${r.method} ${r.path}${HUGE}`, counts.set(res.status, (counts.get(res.status) ?? 0) + 1));
          if (res.status >= 500) throw new Error(`${what}: ${JSON.stringify(res.body).slice(0, 300)}`);
          expect(ms, what).toBeLessThan(HUGE_ANSWER_RATIO * floorMs);
          // a long string or a deep object may be what a field admits (an import is 202 and checked by its job)
          // a key naming a prototype is refused before the numbers are read (400: contract 19), at any depth
          const prototypeKey = body?.kind === 'number' && holdsPrototypeKey(body.text);
          if (prototypeKey && r.path.startsWith('/scim/')) {
            expect([res.status, res.body.scimType], what).toEqual([400, 'invalidPath']);
          } else if (prototypeKey && r.path !== '/mcp' && !r.doc.bodyMediaType) {
            expect(res.status, what).toBe(400);
            expect(res.body.error.code, what).toBe('bad_request');
          } else if (body?.kind === 'number' && r.path.startsWith('/scim/')) {
            // SCIM has no 422: a broken rule is 400 invalidValue in SCIM's shape (shared/scim/errors.ts)
            expect([res.status, res.body.scimType], what).toEqual([400, 'invalidValue']);
          } else if (body?.kind === 'number' && r.path === '/mcp') {
            // the MCP transport refuses what is no JSON-RPC call with its Accept first, in JSON-RPC's shape (405 off POST)
            expect([res.status, res.body.jsonrpc], what).toEqual([r.method === 'POST' ? 406 : 405, '2.0']);
          } else if (body?.kind === 'number' && !r.doc.bodyMediaType) {
            // (a form-encoded route, the token endpoint, refuses a JSON body before reading its numbers)
            expect(res.status, what).toBe(422);
            expect(
              res.body.error.details.map((d: { code: string }) => d.code),
              what,
            ).toContain('invalid_number');
          }
          if (write && res.status >= 400 && ![409, 429].includes(res.status)) {
            expect(await observe(r, path), `a refused ${what} changed what it names`).toEqual(before);
          }
        }),
        { numRuns: HUGE_RUNS, seed: SEED, endOnFailure: true, examples: r.method === 'GET' ? [] : [[worst]] },
      );
    }, 300_000);
  }

  // Last (the tests of a file run in order): what the cases above reached, against the route table itself.
  it('fuzzed every row of the route table, and each answered a 2xx but those that cannot from fuzzed input', () => {
    const table = routes.map((r) => `${r.method} ${r.path}`);
    expect(new Set(table).size).toBe(table.length); // one row a route: `seen` is keyed by method and path
    const sortedTable = [...table].sort();
    expect([...seen.keys()].filter((k) => !k.endsWith(HUGE)).sort()).toEqual(sortedTable);
    expect(
      [...seen.keys()]
        .filter((k) => k.endsWith(HUGE))
        .map((k) => k.slice(0, -HUGE.length))
        .sort(),
    ).toEqual(sortedTable);
    const no2xx = table.filter((k) => ![...seen.get(k)!.keys()].some((status) => status >= 200 && status < 300));
    // a route left out of NO_2XX that never succeeded is a fuzzer that no longer reaches it; one listed that
    // did succeed is a stale entry
    expect(no2xx.sort(), 'routes without a 2xx').toEqual(Object.keys(NO_2XX).sort());
  });
});
