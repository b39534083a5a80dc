import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { C, checkin, goalNow } from './checkins.fixture.ts';
import { createPeriod, goal, P } from './goals.fixture.ts';
import { expectError, listAll, newTenant, type Api, type TenantFixture } from '../support/api.ts';
import { eventually } from '../support/eventually.ts';
import { afterStreamPasses } from '../support/stream-marker.ts';
import { startReceiver } from './webhooks.fixture.ts';

type FeedEvent = {
  id: string;
  type: string;
  timestamp: string;
  data: { tenant_uuid: string; record: any; previous?: Record<string, any> };
};

/** Every event of the feed from `params` on, page by page along pagy.next_cursor (which takes the place of `after`). */
async function readAll(api: Api, params: Record<string, string> = {}, perPage = 100): Promise<FeedEvent[]> {
  const out: FeedEvent[] = [];
  const query = new URLSearchParams({ ...params, per_page: String(perPage) });
  for (let pages = 0; pages < 500; pages++) {
    const res = await api.get(`/events?${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.type).toBe('event');
    expect(res.body.data.records.length).toBeLessThanOrEqual(perPage);
    out.push(...res.body.data.records);
    const next = res.body.data.pagy.next_cursor as string | null;
    if (next === null) return out;
    query.delete('after');
    query.set('cursor', next);
  }
  throw new Error('the feed did not end within 500 pages');
}

/**
 * The feed once the stream has applied everything written so far and the feed passes `held` (an assertion: it
 * throws until the feed holds what it names). The feed is derived state (contract 14: within 60 s), and each
 * record's events reach it in their own lane: `held` names every record's last event the caller goes on to
 * check, not one record's as a proxy for the others'.
 */
async function feedOnceSettled(api: Api, held: (events: FeedEvent[]) => void): Promise<FeedEvent[]> {
  await afterStreamPasses();
  return eventually(async () => {
    const events = await readAll(api);
    held(events);
    return events;
  }, 30_000);
}

const ofRecord = (events: FeedEvent[], uuid: string, type?: string) =>
  events.filter((e) => e.data.record.uuid === uuid && (type === undefined || e.type === type));
const feedPath = (q: string) => `/events?${q}`;

/**
 * GET /events (contract section 18): the events of section 12 written to a feed by the change stream, end to
 * end through the local stack (API → DynamoDB Local's stream → the events projection → the feed).
 */
describe('the event feed', () => {
  let a: TenantFixture;
  let b: TenantFixture;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let hook: { uuid: string };
  let burst: FeedEvent[];
  let K1: { uuid: string; type: string };
  let K2: { uuid: string; type: string };
  let O: { uuid: string; type: string };
  let ci: { uuid: string };
  let bGoal: { uuid: string };

  beforeAll(async () => {
    [a, b] = await Promise.all([newTenant(), newTenant()]);
    receiver = await startReceiver();
    const created = await a.admin.post('/webhooks', { url: receiver.url, events: ['*'] });
    expect(created.status).toBe(201);
    hook = created.body.data.record;

    // A burst: a rollup tree, check-ins on both children at once (each child's own in sequence), renames, deletes.
    const period = await createPeriod(a.admin, 'H1', '2026-01-01', '2026-06-30');
    O = await goal(a.admin, 'objectives', { title: 'Win', time_period_uuid: period.uuid });
    expect((await a.admin.put(P('objectives', O.uuid), { progress_mode: 'rollup' })).status).toBe(200);
    const metric = { start_value: 0, target_value: 100, metric_type: 'reach' as const };
    K1 = await goal(a.admin, 'key_results', { title: 'K1', time_period_uuid: period.uuid, parents: [O.uuid], metric });
    K2 = await goal(a.admin, 'key_results', { title: 'K2 v0', time_period_uuid: period.uuid, parents: [O.uuid], metric });
    await Promise.all([
      (async () => {
        for (const value of [10, 20, 30, 40]) {
          const c = await checkin(a.admin, { goal_uuid: K1.uuid, value, checkin_date: '2026-02-01' });
          if (value === 40) ci = c;
        }
      })(),
      (async () => {
        for (const title of ['K2 v1', 'K2 v2', 'K2 v3']) expect((await a.admin.put(P('key_results', K2.uuid), { title })).status).toBe(200);
        await checkin(a.admin, { goal_uuid: K2.uuid, value: 50, checkin_date: '2026-02-02' });
      })(),
    ]);
    expect((await a.admin.put(C(ci.uuid), { note: 'closed' })).status).toBe(200);
    expect((await a.admin.delete(C(ci.uuid))).status).toBe(200);
    bGoal = await goal(b.admin, 'objectives', {
      title: 'B only',
      time_period_uuid: (await createPeriod(b.admin, 'B', '2026-01-01', '2026-06-30')).uuid,
    });
    const oNow = await goalNow(a.admin, O);
    // settled once it holds exactly what the tests below check of the burst (each record's events up to its last)
    burst = await feedOnceSettled(a.admin, (events) => expectBurst(events, oNow.current_progress));
  });

  /** What the burst's events are: every record's events in commit order, up to each record's last write. */
  function expectBurst(events: FeedEvent[], oProgress: number | null) {
    // one record's check-ins in the order they were made
    expect(ofRecord(events, K1.uuid, 'goal.progress_changed').map((e) => e.data.record.current_value)).toEqual([10, 20, 30, 40, 30]);
    // each rename's previous title is the title the one before it set, and K2's check-in after them
    const renames = ofRecord(events, K2.uuid, 'goal.updated');
    expect(renames.map((e) => [e.data.previous!.title, e.data.record.title])).toEqual([
      ['K2 v0', 'K2 v1'],
      ['K2 v1', 'K2 v2'],
      ['K2 v2', 'K2 v3'],
    ]);
    expect(ofRecord(events, K2.uuid, 'goal.progress_changed').map((e) => e.data.record.current_value)).toEqual([50]);
    // the rolled-up parent: every change of it follows the one before (its old progress is the previous event's
    // new one), the last one at its progress now
    const rollups = ofRecord(events, O.uuid, 'goal.progress_changed');
    expect(rollups.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < rollups.length; i++)
      expect(rollups[i]!.data.previous!.current_progress ?? rollups[i]!.data.record.current_progress).toBe(
        rollups[i - 1]!.data.record.current_progress,
      );
    expect(rollups.at(-1)!.data.record.current_progress).toBe(oProgress);
    // a record's life in order: created first, deleted last
    expect(ofRecord(events, ci.uuid).map((e) => e.type)).toEqual(['checkin.created', 'checkin.updated', 'checkin.deleted']);
    expect(ofRecord(events, O.uuid)[0]!.type).toBe('goal.created');
    // the five check-ins made (K1's four, K2's one)
    expect(events.filter((e) => e.type === 'checkin.created')).toHaveLength(5);
  }
  afterAll(async () => {
    await receiver.stop();
  });

  it('holds the burst, rollups included, each record in commit order, each event once', async () => {
    expect(new Set(burst.map((e) => e.id)).size).toBe(burst.length);
    expect(burst.every((e) => /^evt_[0-9a-f]{32}$/.test(e.id) && e.data.tenant_uuid === a.tenantUuid)).toBe(true);
    // the rolled-up parent's progress now, read again: the burst's last rollup event carries it
    expectBurst(burst, (await goalNow(a.admin, O)).current_progress);
  });

  it('pages by cursor to the same events, and resumes after a given event', async () => {
    expect((await readAll(a.admin, {}, 3)).map((e) => e.id)).toEqual(burst.map((e) => e.id));
    const k = 5;
    const resumed = await readAll(a.admin, { after: burst[k]!.id }, 2);
    expect(resumed.map((e) => e.id)).toEqual(burst.slice(k + 1).map((e) => e.id));
    const last = await a.admin.get(feedPath(`after=${burst[burst.length - 1]!.id}`));
    expect(last.status).toBe(200);
    expect(last.body.data.records).toEqual([]);
    expect(last.body.data.pagy.next_cursor).toBeNull();
    expectError(await a.admin.get(feedPath(`after=evt_${'0'.repeat(32)}`)), 400, 'bad_request');
    expectError(await a.admin.get(feedPath('after=not-an-event')), 400, 'bad_request');
    expectError(await a.admin.get(feedPath('page=2')), 400, 'bad_request');
  });

  it('filters by types; an unknown type is a 400', async () => {
    const checkins = await readAll(a.admin, { types: 'checkin.created' }, 2);
    expect(checkins.map((e) => e.id)).toEqual(burst.filter((e) => e.type === 'checkin.created').map((e) => e.id));
    expect(checkins.length).toBe(5);
    const two = await readAll(a.admin, { types: 'goal.created,checkin.deleted' });
    expect(two.map((e) => e.id)).toEqual(burst.filter((e) => e.type === 'goal.created' || e.type === 'checkin.deleted').map((e) => e.id));
    const bad = expectError(await a.admin.get(feedPath('types=goal.created,goal.exploded')), 400, 'bad_request');
    expect(bad.details[0]).toMatchObject({ field: 'types', message: 'unknown: goal.exploded' });
    expectError(await a.admin.get(feedPath('types=')), 400, 'bad_request');
  });

  it('refuses a forged or another tenant’s cursor with a 400', async () => {
    const first = await a.admin.get(feedPath('per_page=1'));
    const cursor = first.body.data.pagy.next_cursor as string;
    expect(typeof cursor).toBe('string');
    expect((await a.admin.get(feedPath(`per_page=1&cursor=${encodeURIComponent(cursor)}`))).body.data.records[0].id).toBe(burst[1]!.id);
    const foreign = expectError(await b.admin.get(feedPath(`cursor=${encodeURIComponent(cursor)}`)), 400, 'bad_request');
    expect(foreign.details[0]).toMatchObject({ field: 'cursor', code: 'invalid_cursor' });
    // the same position re-encoded without the tenant's check digest, and a payload altered under the old digest
    const [payload, check] = cursor.split('.');
    const moved = Buffer.from(JSON.stringify(['2020-01-01T00', '~'])).toString('base64url');
    for (const forged of [`${moved}.${check}`, `${payload}x.${check}`, payload!, 'garbage', `${payload}.${check}.x`])
      expectError(await a.admin.get(feedPath(`cursor=${encodeURIComponent(forged)}`)), 400, 'bad_request');
    expectError(await a.admin.get(feedPath(`cursor=${encodeURIComponent(cursor)}&after=${burst[0]!.id}`)), 400, 'bad_request');
  });

  it("keeps tenants apart: no other tenant's event, and another tenant's event id is unknown", async () => {
    const bFeed = await feedOnceSettled(b.admin, (events) => expect(events.map((e) => e.data.record.uuid)).toContain(bGoal.uuid));
    expect(bFeed.every((e) => e.data.tenant_uuid === b.tenantUuid)).toBe(true);
    expect(bFeed.map((e) => e.data.record.uuid)).not.toContain(O.uuid);
    const aIds = new Set(burst.map((e) => e.id));
    expect(bFeed.filter((e) => aIds.has(e.id))).toEqual([]);
    expect((await readAll(a.admin)).filter((e) => e.data.tenant_uuid !== a.tenantUuid)).toEqual([]);
    const unknown = expectError(await b.admin.get(feedPath(`after=${burst[0]!.id}`)), 400, 'bad_request');
    expect(unknown.details[0]).toMatchObject({ field: 'after', code: 'unknown_event' });
  });

  it('holds every event a webhook received, under the same id with the same payload', async () => {
    const expected = new Set(burst.map((e) => e.id));
    const received = await eventually(async () => {
      const got = receiver.events();
      const ids = new Set(got.map((r) => r.id));
      const missing = [...expected].filter((id) => !ids.has(id));
      const named = (id: string) => burst.filter((e) => e.id === id).map((e) => `${e.type} of ${e.data.record.uuid} (${id})`);
      if (missing.length) throw new Error(`${missing.length} events not delivered yet: ${missing.flatMap(named).join(', ')}`);
      return got;
    }, 60_000);
    const feed = new Map((await readAll(a.admin)).map((e) => [e.id, e]));
    for (const r of received) {
      const { id, ...payload } = feed.get(r.id) ?? { id: r.id };
      expect(id).toBe(r.id);
      expect(payload).toEqual(r.event);
    }
    expect(received.length).toBeGreaterThanOrEqual(burst.length);
    // at least once to the receiver, and one delivery per event in the endpoint's log, each succeeded
    const ids = [...feed.keys()].sort();
    await eventually(async () => {
      const log = await listAll(a.admin, `/webhooks/${hook.uuid}/deliveries`);
      expect(log.map((d) => d.event_id).sort()).toEqual(ids);
      expect(log.filter((d) => d.status !== 'succeeded')).toEqual([]);
    }, 60_000);
  });

  it('answers admins only: a member and a viewer get 403', async () => {
    // their tokens do not carry events:read (contract section 17)
    for (const role of ['member', 'viewer'] as const) {
      const u = await a.user({ role });
      expectError(await u.api.get('/events'), 403, 'insufficient_scope');
    }
    // an admin demoted to member keeps its token's scope (until reissued), not the role's rights
    const demoted = await a.user({ role: 'admin' });
    expect((await a.admin.put(`/rest/v2/users/${demoted.uuid}`, { user: { role: 'member' } })).status).toBe(200);
    expectError(await demoted.api.get('/events'), 403, 'forbidden');
  });
});
