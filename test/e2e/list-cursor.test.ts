import { describe, expect, it } from 'vitest';
import { ListPageError, pages, records } from '../../clients/typescript/src/index.ts';
import { expectError, type Api } from '../support/api.ts';
import { typed } from '../support/client.ts';
import { eventually } from '../support/eventually.ts';
import { goal, goalApi, goalTenant, P, uuids } from './goals.fixture.ts';

/**
 * Cursor paging on every list (contract 18) and the one list order it relies on (contract 4: records without a
 * value for the sort attribute last in both directions, ties in creation order), on every path a list is served
 * by: the last-check-in order's read model (the whole list, any size) and the in-memory sort of a filtered list.
 */

const OBJ = P('objectives');
const withParam = (path: string, k: string, v: string) => `${path}${path.includes('?') ? '&' : '?'}${k}=${encodeURIComponent(v)}`;

async function pageOf(api: Api, path: string, cursor?: string) {
  const res = await api.get(cursor === undefined ? path : withParam(path, 'cursor', cursor));
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { records: Array<{ uuid: string }>; pagy: Record<string, unknown> & { next_cursor: string | null } };
}

/** Every page by cursor, `between` run after each page but the last; the uuids in the order they came. */
async function byCursor(api: Api, path: string, between?: () => Promise<void>): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < 200; n++) {
    const data = await pageOf(api, path, cursor);
    out.push(...uuids(data.records));
    if (data.pagy.next_cursor === null) return out;
    cursor = data.pagy.next_cursor;
    await between?.();
  }
  throw new Error(`${path}: more than 200 pages`);
}

const checkIn = async (api: Api, goal_uuid: string, checkin_date: string, value = 1) =>
  expect((await api.post('/rest/v2/checkins', { goal_uuid, value, checkin_date })).status).toBe(201);

describe('one list order on every path (contract 4)', () => {
  it('records without a value come last in both directions, ties in creation order, from the read model and in memory alike; paged by cursor the same', async () => {
    const { t, period } = await goalTenant();
    const descriptions = ['b', null, 'a', null, null, 'b'];
    const g: string[] = [];
    for (const [i, description] of descriptions.entries())
      g.push(
        (await goal(t.admin, 'objectives', { title: `o${i}`, time_period_uuid: period.uuid, ...(description ? { description } : {}) }))
          .uuid,
      );
    await checkIn(t.admin, g[1]!, '2025-01-10');
    await checkIn(t.admin, g[3]!, '2025-01-05');
    await checkIn(t.admin, g[4]!, '2025-01-10');
    const at = (...i: number[]) => i.map((n) => g[n]!);
    const want: Record<string, string[]> = {
      'last_checkin_date asc': at(3, 1, 4, 0, 2, 5), // same date: creation order; never checked in: last, creation order
      'last_checkin_date desc': at(1, 4, 3, 0, 2, 5), // the same ties and the same last ones, not asc reversed
      'description asc': at(2, 0, 5, 1, 3, 4),
      'description desc': at(0, 5, 2, 1, 3, 4),
    };
    // the whole list in last-check-in order is the order's read model (at any size; where a check-in moves a
    // goal follows the stream); a filtered small list is sorted in memory; description is sorted in memory both ways
    const paths = (s: string) => [
      `${OBJ}?q[s]=${encodeURIComponent(s)}`,
      `${OBJ}?q[s]=${encodeURIComponent(s)}&q[time_period_uuid_eq]=${period.uuid}`,
    ];
    await eventually(async () => {
      for (const [s, order] of Object.entries(want))
        for (const path of paths(s)) expect([s, path, uuids((await pageOf(t.admin, path)).records)]).toEqual([s, path, order]);
    });
    for (const [s, order] of Object.entries(want))
      for (const path of paths(s)) expect([s, path, await byCursor(t.admin, withParam(path, 'per_page', '2'))]).toEqual([s, path, order]);
  });
});

describe('cursor paging (contract 18)', () => {
  it('every record that lives from the first page to the last comes exactly once while another client creates and deletes, in every order and filter', async () => {
    const { t, period } = await goalTenant();
    const alice = await t.user();
    const other = (await t.user({ role: 'admin' })).api; // the writer: another client of the tenant, between the reader's pages
    const stable: string[] = [];
    for (let i = 0; i < 12; i++)
      stable.push(
        (
          await goal(t.admin, 'objectives', {
            title: `s${String((i * 7) % 12).padStart(2, '0')}`,
            time_period_uuid: period.uuid,
            ...(i % 2 ? { owner_uuids: [alice.uuid] } : {}),
          })
        ).uuid,
      );
    for (const [i, date] of [
      [2, '2025-01-03'],
      [5, '2025-01-09'],
      [7, '2025-01-03'],
      [10, '2025-02-01'],
    ] as const)
      await checkIn(t.admin, stable[i]!, date);
    let churned = 0;
    const alive: string[] = [];
    // between two pages: two new goals (one owned by alice, one checked in) and one churn goal deleted
    const churn = async () => {
      for (const owned of [true, false]) {
        const made = await goal(other, 'objectives', {
          title: `${churned % 2 ? 'a' : 'z'}${churned++}`,
          time_period_uuid: period.uuid,
          ...(owned ? { owner_uuids: [alice.uuid] } : {}),
        });
        alive.push(made.uuid);
        if (!owned) await checkIn(other, made.uuid, '2025-01-05');
      }
      const gone = alive.splice(churned % alive.length, 1)[0]!;
      await goalApi(other).remove('objectives', gone);
    };
    const title = new Map<string, string>();
    for (const r of await pageOf(t.admin, `${OBJ}?per_page=100`).then((d) => d.records as Array<{ uuid: string; title: string }>))
      title.set(r.uuid, r.title);
    const byTitle = [...stable].sort((a, b) => title.get(a)!.localeCompare(title.get(b)!));
    const owned = stable.filter((_, i) => i % 2);
    const checkinDesc = [10, 5, 2, 7, 0, 1, 3, 4, 6, 8, 9, 11].map((i) => stable[i]!);
    const cases: Array<[string, string[]]> = [
      [OBJ, stable],
      [`${OBJ}?q[s]=created_at%20desc`, [...stable].reverse()],
      [`${OBJ}?q[s]=title%20asc`, byTitle],
      [`${OBJ}?q[owners_uuid_eq]=${alice.uuid}`, owned],
      [`${OBJ}?q[owners_uuid_eq]=${alice.uuid}&q[s]=title%20desc`, [...owned].sort((a, b) => title.get(b)!.localeCompare(title.get(a)!))],
      [`${OBJ}?q[time_period_uuid_eq]=${period.uuid}&q[s]=last_checkin_date%20desc`, checkinDesc],
      [`${OBJ}?q[s]=last_checkin_date%20desc`, checkinDesc], // the order's read model
    ];
    // the check-ins reached the read model (the order follows the stream)
    await eventually(async () =>
      expect(uuids((await pageOf(t.admin, `${OBJ}?q[s]=last_checkin_date%20desc&per_page=4`)).records)).toEqual(checkinDesc.slice(0, 4)),
    );
    for (const [path, order] of cases) {
      const seen = await byCursor(t.admin, withParam(path, 'per_page', '3'), churn);
      expect(new Set(seen).size, `${path}: a record repeated`).toBe(seen.length);
      expect(
        seen.filter((id) => stable.includes(id)),
        `${path}: every stable record once, in order`,
      ).toEqual(order);
    }
  });

  it('page numbers keep working beside it; a cursor page answers where the next one starts, null on the last', async () => {
    const { t, period } = await goalTenant();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await goal(t.admin, 'objectives', { title: `p${i}`, time_period_uuid: period.uuid })).uuid);
    const first = await pageOf(t.admin, `${OBJ}?per_page=2`);
    expect(first.pagy).toEqual({ page: 1, per_page: 2, offset: 0, next: 2, prev: null, next_cursor: expect.any(String) });
    const second = await pageOf(t.admin, `${OBJ}?per_page=2`, first.pagy.next_cursor!);
    expect(uuids(second.records)).toEqual(made.slice(2, 4));
    expect(second.pagy).toMatchObject({ next: null, prev: null, next_cursor: expect.any(String) });
    const last = await pageOf(t.admin, `${OBJ}?per_page=2`, second.pagy.next_cursor!);
    expect([uuids(last.records), last.pagy.next_cursor]).toEqual([made.slice(4), null]);
    const page2 = await pageOf(t.admin, `${OBJ}?per_page=2&page=2`);
    expect([uuids(page2.records), page2.pagy.next, page2.pagy.prev]).toEqual([made.slice(2, 4), 3, 1]);
    // a page size may change from page to page (the cursor is the position, not the size)
    expect(uuids((await pageOf(t.admin, `${OBJ}?per_page=3`, first.pagy.next_cursor!)).records)).toEqual(made.slice(2, 5));
    // the typed client's iterators: pages by cursor, records across them, a walk resumed from a cursor, a page refused
    const client = typed(t.admin);
    const sizes: number[] = [];
    for await (const p of pages(client, '/rest/v2/objectives', { query: { per_page: '2' } })) sizes.push(p.records.length);
    expect(sizes).toEqual([2, 2, 1]);
    const walked: string[] = [];
    for await (const g of records(client, '/rest/v2/objectives', { query: { per_page: '2', 'q[s]': 'created_at desc' } }))
      walked.push(g.uuid);
    expect(walked).toEqual([...made].reverse());
    const resumed: string[] = [];
    for await (const g of records(client, '/rest/v2/objectives', { query: { per_page: '2' }, cursor: first.pagy.next_cursor! }))
      resumed.push(g.uuid);
    expect(resumed).toEqual(made.slice(2));
    const refusedWalk = records(client, '/rest/v2/objectives', {
      query: { per_page: '2', 'q[s]': 'title asc' },
      cursor: first.pagy.next_cursor!,
    });
    await expect(refusedWalk.next()).rejects.toMatchObject({ status: 400 });
    await expect(records(client, '/rest/v2/objectives', { cursor: 'x' }).next()).rejects.toBeInstanceOf(ListPageError);
    // other lists: users, labels, check-ins, a goal's history
    const labels: string[] = [];
    for (let i = 0; i < 3; i++) labels.push((await t.admin.post('/rest/v2/labels', { name: `l${i}` })).body.data.record.uuid);
    expect(await byCursor(t.admin, '/rest/v2/labels?per_page=1')).toEqual(labels);
    const users = uuids((await pageOf(t.admin, '/rest/v2/users?per_page=100')).records);
    expect(await byCursor(t.admin, '/rest/v2/users?per_page=1')).toEqual(users);
    for (const [i, d] of ['2025-01-01', '2025-01-02', '2025-01-03'].entries()) await checkIn(t.admin, made[0]!, d, 10 * (i + 1)); // each a history point
    const checkins = uuids((await pageOf(t.admin, `/rest/v2/checkins?q[goal_uuid_eq]=${made[0]}&per_page=100`)).records);
    expect(checkins).toHaveLength(3);
    expect(await byCursor(t.admin, `/rest/v2/checkins?q[goal_uuid_eq]=${made[0]}&per_page=2`)).toEqual(checkins);
    const history = P('objectives', made[0]!, '/history');
    await eventually(async () => expect((await pageOf(t.admin, history)).records).toHaveLength(3));
    const all = (await pageOf(t.admin, history)).records.map((r) => JSON.stringify(r));
    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const d = await pageOf(t.admin, withParam(history, 'per_page', '2'), cursor);
      paged.push(...d.records.map((r) => JSON.stringify(r)));
      cursor = d.pagy.next_cursor ?? undefined;
    } while (cursor);
    expect(paged).toEqual(all);
  });

  it('a forged, altered or foreign cursor (another tenant, list, filter or sort) is 400 in the error shape, never another list', async () => {
    const { t, period } = await goalTenant();
    const other = await goalTenant();
    for (let i = 0; i < 3; i++) {
      await goal(t.admin, 'objectives', { title: `f${i}`, time_period_uuid: period.uuid });
      await goal(other.t.admin, 'objectives', { title: `x${i}`, time_period_uuid: other.period.uuid });
    }
    const cursor = (await pageOf(t.admin, `${OBJ}?per_page=1`)).pagy.next_cursor!;
    const sorted = (await pageOf(t.admin, `${OBJ}?per_page=1&q[s]=title%20asc`)).pagy.next_cursor!;
    const [c, payload, mac] = cursor.split('.') as [string, string, string];
    const body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const altered = `${c}.${Buffer.from(JSON.stringify({ ...body, k: '0' }), 'utf8').toString('base64url')}.${mac}`;
    const flipped = `${c}.${payload}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`;
    const refused = async (api: Api, path: string, sent: string, field = 'cursor') => {
      const e = expectError(await api.get(withParam(path, 'cursor', sent)), 400, 'bad_request');
      expect(e.details.map((d) => d.field)).toEqual([field]);
      return e;
    };
    for (const forged of ['x', 'c1.e30.AAAAAAAAAAAAAAAAAAAAAA', altered, flipped, `${cursor}x`, 'c1..', cursor.repeat(30)])
      await refused(t.admin, `${OBJ}?per_page=1`, forged);
    // another tenant's list (the same route, filters and sort): never its data
    expect((await refused(other.t.admin, `${OBJ}?per_page=1`, cursor)).message).toMatch(/another list/);
    await refused(t.admin, `${P('key_results')}?per_page=1`, cursor); // another list
    await refused(t.admin, `${OBJ}?per_page=1&q[title_cont]=f`, cursor); // another filter
    await refused(t.admin, `${OBJ}?per_page=1&q[s]=created_at%20desc`, cursor); // another sort
    await refused(t.admin, `${OBJ}?per_page=1`, sorted);
    await refused(t.admin, '/rest/v2/users?per_page=1', cursor);
    // with page, offset or count it would say two positions
    for (const k of ['page=2', 'offset=1', 'count=true']) await refused(t.admin, `${OBJ}?per_page=1&${k}`, cursor, k.split('=')[0]);
    // the cursor still works where it belongs
    expect((await pageOf(t.admin, `${OBJ}?per_page=1`, cursor)).records).toHaveLength(1);
  });
});
