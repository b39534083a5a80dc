import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileSecretBox } from '#shared/auth/secret-box.ts';
import type { Db } from '#shared/db/client.ts';
import type { CheckinRecord } from '#shared/domain/checkins/entity.ts';
import type { GoalRecord } from '#shared/domain/goals/entity.ts';
import { deliveryUuid } from '#shared/domain/webhooks/deliveries.ts';
import { changedFields, draftEvents, eventId, mayMakeEvents } from '#shared/domain/webhooks/events.ts';
import { buildEvents } from '#shared/events/build.ts';
import { newWebhookSecret, signPayload, webhookHeaders } from '#shared/domain/webhooks/signature.ts';
import { isBlockedAddress, resolveSafeTarget, urlShapeProblem } from '#shared/outbound/url-safety.ts';
import { eventBridgeBus, EVENT_SOURCE } from '#shared/events/event-bus.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import type { TableChange } from '#shared/table-change.ts';

const T = '11111111-1111-4111-8111-111111111111';
const G = '22222222-2222-4222-8222-222222222222';
const C = '33333333-3333-4333-8333-333333333333';

// No label reads happen for records without labels, so presenting needs no database.
const loader = () => new Loader({ tenantId: T, db: { send: () => Promise.reject(new Error('no db in unit tests')) } as unknown as Db });

const goal = (over: Partial<GoalRecord> = {}): GoalRecord =>
  ({
    uuid: G,
    type: 'key_result',
    title: 'Grow',
    description: null,
    start_date: '2026-01-01',
    end_date: '2026-12-31',
    goal_type: 'committed',
    time_period_uuid: 'tp',
    current_metric_uuid: null,
    metric: null,
    creator_uuid: 'u',
    last_checkin_date: null,
    score: null,
    current_progress: null,
    current_value: null,
    current_status: 'not_started',
    status: null,
    source_uuid: null,
    source_type: null,
    path: null,
    searchable_content: null,
    progress_mode: 'manual',
    value_updated_at: null,
    status_updated_at: null,
    value_updated_by_uuid: null,
    status_updated_by_uuid: null,
    visibility: 'public',
    ai_rollup_enabled: false,
    data_sources_count: 0,
    discarded_at: null,
    discarded_by_uuid: null,
    short_id: null,
    short_id_uuid: null,
    archived_at: null,
    archived_by_uuid: null,
    owner_uuids: [],
    parent_links: [],
    visible_entities: [],
    checkin_due_days: null,
    delegate_uuids: [],
    partner_goals_external_id: null,
    team_uuids: [],
    label_uuids: [],
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...over,
  }) as GoalRecord;

const goalItem = (rec: GoalRecord, v: number) => ({ PK: `T#${T}#goal#${rec.uuid}`, SK: '#', kind: 'goal', id: rec.uuid, v, rec });
const change = (
  eventName: TableChange['eventName'],
  keys: { PK: string; SK: string },
  oldImage?: Record<string, unknown>,
  newImage?: Record<string, unknown>,
): TableChange => ({
  eventId: `e-${Math.random()}`,
  eventName,
  at: '2026-11-23T10:00:00.000Z',
  tenantId: T,
  keys,
  oldImage,
  newImage,
});
const goalKeys = { PK: `T#${T}#goal#${G}`, SK: '#' };

describe('events from changes', () => {
  it('a goal insert is goal.created with the record as the API presents it (kind in record.type)', async () => {
    const events = await buildEvents(change('INSERT', goalKeys, undefined, goalItem(goal(), 1)), loader());
    expect(events.map((e) => e.event.type)).toEqual(['goal.created']);
    expect(events[0]!.event).toMatchObject({
      type: 'goal.created',
      timestamp: '2026-11-23T10:00:00.000Z',
      data: { tenant_uuid: T, record: { uuid: G, type: 'key_result', status: 'not_started', delegate_uuid: null, labels: [] } },
    });
    expect(events[0]!.event.data).not.toHaveProperty('previous');
    expect(events[0]!.event.data.record).not.toHaveProperty('label_uuids');
  });

  it('a rollup or check-in moving progress is goal.progress_changed only, with the old values', async () => {
    const before = goal({ current_progress: 10 });
    const after = goal({
      current_progress: 55,
      current_status: 'on_track',
      last_checkin_date: '2026-11-23',
      updated_at: '2026-11-23T10:00:00.000Z',
    });
    const events = await buildEvents(change('MODIFY', goalKeys, goalItem(before, 3), goalItem(after, 4)), loader());
    expect(events.map((e) => e.event.type)).toEqual(['goal.progress_changed']);
    expect(events[0]!.event.data.previous).toEqual({ current_progress: 10, current_status: 'not_started', status: 'not_started' });
    expect(events[0]!.event.data.record).toMatchObject({ current_progress: 55 });
  });

  it('an edit is goal.updated with the changed fields; a soft delete is goal.deleted; bookkeeping alone is nothing', async () => {
    const updated = await buildEvents(
      change('MODIFY', goalKeys, goalItem(goal(), 1), goalItem(goal({ title: 'Grow more', updated_at: 'x' }), 2)),
      loader(),
    );
    expect(updated.map((e) => [e.event.type, e.event.data.previous])).toEqual([['goal.updated', { title: 'Grow' }]]);
    const deleted = await buildEvents(
      change('MODIFY', goalKeys, goalItem(goal(), 2), goalItem(goal({ discarded_at: 'now', discarded_by_uuid: 'u' }), 3)),
      loader(),
    );
    expect(deleted.map((e) => e.event.type)).toEqual(['goal.deleted']);
    expect(deleted[0]!.event.data.record).toMatchObject({ discarded_at: 'now' });
    const bookkeeping = await buildEvents(
      change('MODIFY', goalKeys, goalItem(goal(), 2), goalItem(goal({ last_checkin_date: '2026-11-23', updated_at: 'y' }), 3)),
      loader(),
    );
    expect(bookkeeping).toEqual([]);
  });

  it('check-ins: created, updated (with previous), deleted (the removed record); access requests: created only when new and pending', async () => {
    const ci = (over: Partial<CheckinRecord> = {}) =>
      ({
        uuid: C,
        goal_uuid: G,
        metric_uuid: null,
        value: 5,
        progress: 50,
        score: null,
        checkin_date: '2026-11-23',
        status: 'on_track',
        note: null,
        creator_uuid: 'u',
        source_info: null,
        mentioned_entities: [],
        label_uuids: [],
        created_at: 'a',
        updated_at: 'a',
        ...over,
      }) as unknown as CheckinRecord;
    const keys = { PK: `T#${T}#checkin#${C}`, SK: '#' };
    const item = (rec: CheckinRecord, v: number) => ({ ...keys, kind: 'checkin', id: C, v, rec });
    expect((await buildEvents(change('INSERT', keys, undefined, item(ci(), 1)), loader())).map((e) => e.event.type)).toEqual([
      'checkin.created',
    ]);
    const upd = await buildEvents(change('MODIFY', keys, item(ci(), 1), item(ci({ value: 7, updated_at: 'b' }), 2)), loader());
    expect(upd.map((e) => [e.event.type, e.event.data.previous])).toEqual([['checkin.updated', { value: 5 }]]);
    const del = await buildEvents(change('REMOVE', keys, item(ci(), 2)), loader());
    expect(del.map((e) => [e.event.type, e.event.data.record.uuid])).toEqual([['checkin.deleted', C]]);

    const arKeys = { PK: `T#${T}#access_request#document:r:u`, SK: '#' };
    const ar = (id: string, status: string, v: number) => ({
      ...arKeys,
      kind: 'access_request',
      id,
      v,
      uuid: id,
      shareable_type: 'documents',
      shareable_uuid: 'r',
      requester_uuid: 'u',
      requested_level: 'view',
      message: null,
      status,
      created_at: 'a',
      updated_at: 'a',
      last_email_sent_at: 'a',
      resolved_at: null,
      resolved_by_uuid: null,
    });
    const created = await buildEvents(change('INSERT', arKeys, undefined, ar('r1', 'pending', 1)), loader());
    expect(created.map((e) => e.event.type)).toEqual(['access_request.created']);
    expect(created[0]!.event.data.record).toEqual(expect.objectContaining({ uuid: 'r1', status: 'pending' }));
    expect(created[0]!.event.data.record).not.toHaveProperty('PK');
    expect(await buildEvents(change('MODIFY', arKeys, ar('r1', 'pending', 1), ar('r1', 'pending', 2)), loader())).toEqual([]); // upgrade, resend window
    expect(
      (await buildEvents(change('MODIFY', arKeys, ar('r1', 'resolved', 3), ar('r2', 'pending', 4)), loader())).map((e) => e.event.type),
    ).toEqual(['access_request.created']);
  });

  it('names kept up to date after a label rename or delete are no goal.updated or checkin.updated; a relabelling is', async () => {
    const named = goal({
      label_uuids: ['la', 'lb'],
      labels: [
        { uuid: 'la', name: 'Old' },
        { uuid: 'lb', name: 'B' },
      ],
    });
    const synced = goal({ label_uuids: ['la', 'lb'], labels: [{ uuid: 'la', name: 'New' }] }); // la renamed, lb deleted
    expect(await buildEvents(change('MODIFY', goalKeys, goalItem(named, 2), goalItem(synced, 3)), loader())).toEqual([]);
    const relabelled = await buildEvents(
      change('MODIFY', goalKeys, goalItem(named, 2), goalItem(goal({ label_uuids: ['lc'], labels: [{ uuid: 'lc', name: 'C' }] }), 3)),
      loader(),
    );
    expect(relabelled.map((e) => [e.event.type, e.event.data.previous, e.event.data.record.labels])).toEqual([
      [
        'goal.updated',
        {
          labels: [
            { uuid: 'la', name: 'Old' },
            { uuid: 'lb', name: 'B' },
          ],
        },
        [{ uuid: 'lc', name: 'C' }],
      ],
    ]);
    const ci = (over: Partial<CheckinRecord>) =>
      ({
        uuid: C,
        goal_uuid: G,
        metric_uuid: null,
        value: 5,
        progress: 50,
        score: null,
        checkin_date: '2026-11-23',
        status: 'on_track',
        note: null,
        creator_uuid: 'u',
        source_info: null,
        mentioned_entities: [],
        label_uuids: ['la'],
        created_at: 'a',
        updated_at: 'a',
        ...over,
      }) as unknown as CheckinRecord;
    const keys = { PK: `T#${T}#checkin#${C}`, SK: '#' };
    const item = (rec: CheckinRecord, v: number) => ({ ...keys, kind: 'checkin', id: C, v, rec });
    expect(
      await buildEvents(
        change(
          'MODIFY',
          keys,
          item(ci({ labels: [{ uuid: 'la', name: 'Old' }] }), 1),
          item(ci({ labels: [{ uuid: 'la', name: 'New' }] }), 2),
        ),
        loader(),
      ),
    ).toEqual([]);
  });

  it('ignores what makes no event: entries, other entities, a goal REMOVE', () => {
    expect(mayMakeEvents(change('INSERT', { PK: `T#${T}#goal#${G}`, SK: 'IX#owner#u' }, undefined, {}))).toBe(false);
    expect(mayMakeEvents(change('INSERT', { PK: `T#${T}#label#x`, SK: '#' }, undefined, {}))).toBe(false);
    expect(draftEvents(change('REMOVE', goalKeys, goalItem(goal(), 1)))).toBeUndefined();
  });

  it('derives the same id from the same change (a replay) and different ids from different versions or types', () => {
    const a = change('MODIFY', goalKeys, goalItem(goal(), 1), goalItem(goal({ title: 'x' }), 2));
    const replay = { ...a, eventId: 'another-delivery-of-the-record' };
    expect(eventId(a, 'goal.updated')).toBe(eventId(replay, 'goal.updated'));
    expect(eventId(a, 'goal.updated')).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(eventId(a, 'goal.progress_changed')).not.toBe(eventId(a, 'goal.updated'));
    expect(eventId(change('MODIFY', goalKeys, goalItem(goal(), 2), goalItem(goal({ title: 'y' }), 3)), 'goal.updated')).not.toBe(
      eventId(a, 'goal.updated'),
    );
    expect(deliveryUuid('w1', 'evt_1')).toBe(deliveryUuid('w1', 'evt_1'));
    expect(deliveryUuid('w1', 'evt_1')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(deliveryUuid('w2', 'evt_1')).not.toBe(deliveryUuid('w1', 'evt_1'));
  });

  it('changedFields reports old values of differing keys only', () => {
    expect(changedFields({ a: 1, b: [1], c: 3 }, { a: 1, b: [2], d: 4 }, new Set(['c']))).toEqual({ b: [1], d: null });
  });
});

describe('signatures', () => {
  it('matches the Standard Webhooks reference vector', () => {
    expect(signPayload('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('makes whsec_ secrets of 32 random bytes and the three headers', () => {
    const s = newWebhookSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(s.slice(6), 'base64')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(s);
    const h = webhookHeaders(s, 'evt_1', '{}', 1_700_000_000_999);
    expect(h).toEqual({
      'webhook-id': 'evt_1',
      'webhook-timestamp': '1700000000',
      'webhook-signature': signPayload(s, 'evt_1', 1_700_000_000, '{}'),
    });
  });
});

describe('URL safety', () => {
  it('blocks private, loopback, link-local, metadata, CGNAT and mapped addresses; allows public ones', () => {
    for (const a of [
      '10.1.2.3',
      '127.0.0.1',
      '169.254.169.254',
      '172.16.0.1',
      '192.168.1.1',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00:ec2::254',
      '::ffff:10.0.0.1',
      '::ffff:127.0.0.1',
      '224.0.0.1',
      'not-an-ip',
    ])
      expect(isBlockedAddress(a), a).toBe(true);
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(isBlockedAddress(a), a).toBe(false);
  });

  it('deployed: https only, no credentials; every resolved address checked (one private address is enough to refuse)', async () => {
    const prev = process.env.WEBHOOK_ALLOW_LOCAL_HTTP;
    delete process.env.WEBHOOK_ALLOW_LOCAL_HTTP;
    try {
      expect(urlShapeProblem('http://example.com/hook')).toBe('must use https');
      expect(urlShapeProblem('http://127.0.0.1:8080/hook')).toBe('must use https');
      expect(urlShapeProblem('https://user:pw@example.com/')).toBe('must not carry credentials');
      expect(urlShapeProblem('nope')).toBe('must be an absolute URL');
      await expect(resolveSafeTarget('https://hooks.example.com/x', async () => ['93.184.216.34'])).resolves.toMatchObject({
        address: '93.184.216.34',
      });
      await expect(resolveSafeTarget('https://rebind.example.com/x', async () => ['93.184.216.34', '10.0.0.7'])).rejects.toThrow(/private/);
      await expect(resolveSafeTarget('https://169.254.169.254/latest/meta-data')).rejects.toThrow(/private/);
      await expect(resolveSafeTarget('https://[::1]/x')).rejects.toThrow(/private/);
      await expect(
        resolveSafeTarget('https://gone.example.com/x', async () => {
          throw new Error('ENOTFOUND');
        }),
      ).rejects.toThrow(/does not resolve/);
    } finally {
      if (prev !== undefined) process.env.WEBHOOK_ALLOW_LOCAL_HTTP = prev;
    }
  });

  it('locally (the switch on): http to 127.0.0.1 and localhost only', async () => {
    process.env.WEBHOOK_ALLOW_LOCAL_HTTP = 'true';
    try {
      await expect(resolveSafeTarget('http://127.0.0.1:9/x')).resolves.toMatchObject({ address: '127.0.0.1' });
      await expect(resolveSafeTarget('http://localhost:9/x')).resolves.toMatchObject({ address: '127.0.0.1' });
      expect(urlShapeProblem('http://example.com/')).toBe('must use https');
      await expect(resolveSafeTarget('https://10.0.0.1/x')).rejects.toThrow(/private/);
    } finally {
      delete process.env.WEBHOOK_ALLOW_LOCAL_HTTP;
    }
  });
});

describe('sealed secrets (local key file)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'secret-box-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  it('round-trips, never stores the plain text, and refuses another context or a tampered value', async () => {
    const box = fileSecretBox(join(dir, 'key'));
    const ctx = { tenant_uuid: 't1', webhook_uuid: 'w1' };
    const sealed = await box.seal('whsec_abc', ctx);
    expect(sealed).not.toContain('whsec_abc');
    expect(await box.open(sealed, ctx)).toBe('whsec_abc');
    expect(await fileSecretBox(join(dir, 'key')).open(sealed, ctx)).toBe('whsec_abc'); // the key persists
    await expect(box.open(sealed, { tenant_uuid: 't2', webhook_uuid: 'w1' })).rejects.toThrow();
    const raw = Buffer.from(sealed.slice('local:v1:'.length), 'base64');
    raw[raw.length - 1]! ^= 1;
    await expect(box.open(`local:v1:${raw.toString('base64')}`, ctx)).rejects.toThrow();
  });
});

describe('EventBridge publisher (mocked client)', () => {
  it('puts each event on the bus with source goal-tracking and detail-type = event type, 10 per call', async () => {
    const calls: any[] = [];
    const bus = eventBridgeBus('the-bus', {
      send: async (cmd: any) => (calls.push(cmd.input), { FailedEntryCount: 0, Entries: [] }),
    } as any);
    const events = Array.from({ length: 12 }, (_, i) => ({
      type: i % 2 ? 'goal.created' : 'checkin.created',
      timestamp: '2026-11-23T10:00:00.000Z',
      data: { tenant_uuid: T, record: { i } },
    }));
    await bus.publish(events);
    expect(calls.map((c) => c.Entries.length)).toEqual([10, 2]);
    expect(calls[0].Entries[1]).toMatchObject({ EventBusName: 'the-bus', Source: EVENT_SOURCE, DetailType: 'goal.created' });
    expect(EVENT_SOURCE).toBe('goal-tracking');
    expect(JSON.parse(calls[1].Entries[1].Detail)).toEqual(events[11]);
  });

  it('fails when any entry is refused, so the change is retried rather than the event lost', async () => {
    const bus = eventBridgeBus('b', {
      send: async () => ({ FailedEntryCount: 1, Entries: [{ ErrorCode: 'ThrottlingException', ErrorMessage: 'slow down' }] }),
    } as any);
    await expect(bus.publish([{ type: 'goal.created', timestamp: '2026-11-23T10:00:00.000Z', data: { tenant_uuid: T } }])).rejects.toThrow(
      /ThrottlingException/,
    );
  });
});
