import { describe, expect, it } from 'vitest';
import { ENTITY_SK, keys } from '#shared/db/keys.ts';
import type { Stored } from '#shared/db/model.ts';
import { checkVersionOp, createOp, deleteSideOp, putSideOp, replaceOp, type TxOp } from '#shared/db/tx-ops.ts';
import { checkinEntity, type CheckinRecord } from '#shared/domain/checkins/entity.ts';
import { goalEntity, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { historyKey } from '#shared/domain/history/entity.ts';
import type { LabelRecord } from '#shared/domain/labels/entity.ts';
import type { AccessRequestRecord } from '#shared/domain/sharing/entity.ts';
import { notificationEntity } from '#shared/domain/sharing/entity.ts';
import { ACCESS_REQUEST_QUEUE } from '#shared/domain/sharing/mail.ts';
import { requestEmailMessage, requestNotifications } from '#shared/domain/sharing/notifications.ts';
import type { UserRecord } from '#shared/domain/users/entity.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import { webhookEntity, type WebhookRecord } from '#shared/domain/webhooks/entity.ts';
import type { IdentifiedEvent } from '#shared/domain/webhooks/events.ts';
import { READ_MODELS_VERSION } from '#shared/read-models/goal-entries.ts';
import { newTenantReadyOp, type GoalChange } from '#shared/read-models/goal-sync.ts';
import type { ProjectionWrites, Step } from '#shared/stream/projection.ts';
import { accessRequestNoticesProjection } from '#shared/stream/projections/access-request-notices.ts';
import { currentValuesProjection } from '#shared/stream/projections/current-values.ts';
import { outboundEventsProjection } from '#shared/stream/projections/events.ts';
import { goalPathsProjection } from '#shared/stream/projections/goal-paths.ts';
import { goalReadModelsProjection } from '#shared/stream/projections/goal-read-models.ts';
import { historyProjection } from '#shared/stream/projections/history.ts';
import { labelNamesProjection, projectLabelSync } from '#shared/stream/projections/label-names.ts';
import { rollupProjection, rollupStart, type RollupsState } from '#shared/stream/projections/rollups.ts';
import { creatorCheckStep, webhookCreatorsProjection } from '#shared/stream/projections/webhook-creators.ts';
import type { TableChange } from '#shared/table-change.ts';
import { goalRecord } from '../support/goal-record.ts';

/**
 * Every projection's `project`: pure, from the change and the state its `reads` returns, to the writes the
 * committer commits (shared/stream/commit.ts). No table: the state is built here as `reads` would return it.
 */
const T = 't1';
const NOW = '2026-03-01T12:00:00.000Z';
const AT = '2026-03-01T11:00:00.000Z';

const change = (kind: string, before?: object, after?: object, vBefore = 1): TableChange => ({
  eventId: 'ev-1',
  eventName: before && after ? 'MODIFY' : after ? 'INSERT' : 'REMOVE',
  at: AT,
  tenantId: T,
  keys: { PK: `T#${T}#${kind}#x`, SK: ENTITY_SK },
  oldImage: before ? { kind, v: vBefore, rec: before } : undefined,
  newImage: after ? { kind, v: vBefore + 1, rec: after } : undefined,
});
const stored = <R>(record: R, version = 3): Stored<R> => ({ record, version });

const goal = (uuid: string, over: Partial<GoalRecord> = {}): GoalRecord => goalRecord({ uuid, ...over });
/** The record a replace writes (fails for any other operation). */
const replaced = (op: TxOp): GoalRecord => {
  if (op.op !== 'replace') throw new Error(`${op.op}, not a replace`);
  return op.after as GoalRecord;
};
const link = (parent_uuid: string) => ({ parent_uuid, contribution_percent: 100 });

describe('current-values: a goal follows its latest check-in', () => {
  const checkin = {
    uuid: 'c1',
    goal_uuid: 'g',
    value: 50,
    status: 'on_track',
    score: null,
    checkin_date: '2026-02-28',
    updated_at: AT,
    updated_by_uuid: 'u',
  } as unknown as CheckinRecord;
  const c = change('checkin', undefined, checkin);
  /** What a goal holds once it follows that check-in. */
  const followsCheckin: Partial<GoalRecord> = {
    current_value: 50,
    current_progress: 25,
    current_status: 'on_track',
    last_checkin_date: '2026-02-28',
    value_updated_at: AT,
    value_updated_by_uuid: 'u',
    status_updated_at: AT,
    status_updated_by_uuid: 'u',
  };

  it('writes the goal following the check-in, at the version read, stamped now', () => {
    const g = stored(goal('g'));
    const writes = currentValuesProjection.project(c, { goal: g, latest: checkin }, NOW);
    expect(writes).toEqual({
      transactions: [[replaceOp(goalEntity, g, { ...g.record, ...followsCheckin, updated_at: NOW })]],
    });
  });

  it('writes nothing when the goal already follows it (a replay) or is gone', () => {
    const following = goal('g', followsCheckin);
    expect(currentValuesProjection.project(c, { goal: stored(following), latest: checkin }, NOW)).toEqual({});
    expect(currentValuesProjection.project(c, { goal: undefined, latest: undefined }, NOW)).toEqual({});
  });
});

describe('history: a goal change that moved its value becomes a point at its version', () => {
  it('puts the point at the key of the version the change made; a replay puts the same item', () => {
    const before = goal('g', { updated_at: '2026-02-01T00:00:00.000Z' });
    const after = goal('g', { current_value: 100, current_progress: 50, current_status: 'on_track', updated_at: AT });
    const writes = historyProjection.project(change('goal', before, after, 4), undefined, NOW);
    expect(writes.transactions).toHaveLength(1);
    const [op] = writes.transactions![0]!;
    expect(op).toMatchObject({ op: 'putSide', key: historyKey(T, 'g', 5), item: { kind: 'history', id: 'g', v: 5 } });
    expect(op && 'if' in op).toBe(false); // unconditioned
    expect(historyProjection.project(change('goal', before, after, 4), undefined, NOW)).toEqual(writes);
  });

  it('writes nothing for a change that moved none of value, progress and status', () => {
    expect(
      historyProjection.project(change('goal', goal('g'), goal('g', { title: 'renamed' } as Partial<GoalRecord>)), undefined, NOW),
    ).toEqual({});
  });
});

describe('goal-paths: a goal path under its first parent, then its children', () => {
  const parent = goal('p', { path: 'root/p' });
  const moved = change('goal', goal('g', { parent_links: [] }), goal('g', { parent_links: [link('p')] }));

  it('its own wrong path first, at the version read (the children follow from that write)', () => {
    const g = stored(goal('g', { parent_links: [link('p')], path: 'g' }));
    const child = stored(goal('c', { parent_links: [link('g')], path: 'g/c' }));
    expect(goalPathsProjection.project(moved, { goal: g, parent, children: [child] }, NOW)).toEqual({
      transactions: [[replaceOp(goalEntity, g, { ...g.record, path: 'root/p/g' })]],
    });
  });

  it('with its own path right: a step per child whose path is wrong, 8 at once, each reading the child again', async () => {
    const g = stored(goal('g', { parent_links: [link('p')], path: 'root/p/g' }));
    const wrong = stored(goal('c1', { parent_links: [link('g')], path: 'g/c1' }));
    const right = stored(goal('c2', { parent_links: [link('g')], path: 'root/p/g/c2' }));
    const other = stored(goal('c3', { parent_links: [link('q'), link('g')], path: 'q/c3' })); // first parent elsewhere
    const writes = goalPathsProjection.project(moved, { goal: g, parent, children: [wrong, right, other] }, NOW);
    expect(writes.concurrency).toBe(8);
    expect(writes.steps).toHaveLength(1);
    const step = writes.steps![0] as Step<Stored<GoalRecord> | undefined>;
    expect(step.project(wrong, NOW)).toEqual({ transactions: [[replaceOp(goalEntity, wrong, { ...wrong.record, path: 'root/p/g/c1' })]] });
    // read again: fixed meanwhile, or moved to another first parent, or gone: nothing to write
    expect(step.project(stored({ ...wrong.record, path: 'root/p/g/c1' }, 4), NOW)).toEqual({});
    expect(step.project(stored({ ...wrong.record, parent_links: [link('q')] }, 4), NOW)).toEqual({});
    expect(step.project(undefined, NOW)).toEqual({});
  });

  it('nothing for a goal gone since, or whose children are all right', () => {
    expect(goalPathsProjection.project(moved, { goal: undefined, parent, children: [] }, NOW)).toEqual({});
    const g = stored(goal('g', { parent_links: [link('p')], path: 'root/p/g' }));
    expect(goalPathsProjection.project(moved, { goal: g, parent, children: [] }, NOW)).toEqual({});
  });
});

describe('label-names: names kept on goals and check-ins', () => {
  const label = (uuid: string, name: string) => ({ uuid, name }) as LabelRecord;

  it('a record naming a renamed label: its names written at the version read, updated_at kept', () => {
    const g = stored(goal('g', { label_uuids: ['l1'], labels: [{ uuid: 'l1', name: 'Old' }] }));
    const writes = labelNamesProjection.project(
      change('goal', undefined, g.record),
      { goal: { record: g, labels: new Map([['l1', label('l1', 'New')]]) } },
      NOW,
    );
    expect(writes).toEqual({ transactions: [[replaceOp(goalEntity, g, { ...g.record, labels: [{ uuid: 'l1', name: 'New' }] })]] });
  });

  it('a check-in whose names are current, or gone since: nothing', () => {
    const ci = stored({ uuid: 'c', label_uuids: ['l1'], labels: [{ uuid: 'l1', name: 'Same' }] } as unknown as CheckinRecord);
    expect(projectLabelSync(checkinEntity, { record: ci, labels: new Map([['l1', label('l1', 'Same')]]) })).toEqual({});
    expect(projectLabelSync(checkinEntity, undefined)).toEqual({});
  });

  it('a label renamed: one step per holder, goals then check-ins, 8 at once, logged with how many it synced', () => {
    const c = change('label', label('l1', 'Old'), label('l1', 'New'));
    const writes = labelNamesProjection.project(c, { label: 'l1', holders: { goals: ['g1', 'g2'], checkins: ['c1'] } }, NOW);
    expect(writes.steps).toHaveLength(3);
    expect(writes.concurrency).toBe(8);
    expect(writes.log).toEqual({ message: 'label names', fields: { label_uuid: 'l1', holders: 3 }, count: 'synced' });
    // each step is the holder's own sync
    const g = stored(goal('g1', { label_uuids: ['l1'], labels: [{ uuid: 'l1', name: 'Old' }] }));
    expect(writes.steps![0]!.project({ record: g, labels: new Map([['l1', label('l1', 'New')]]) }, NOW)).toEqual({
      transactions: [[replaceOp(goalEntity, g, { ...g.record, labels: [{ uuid: 'l1', name: 'New' }] })]],
    });
  });
});

describe('rollups: the goal and its rollup ancestors recomputed from their children', () => {
  const child = (uuid: string, progress: number) => goal(uuid, { parent_links: [link('p')], current_progress: progress });
  const parentGoal = goal('p', { progress_mode: 'rollup', current_progress: 10, rollup: { sum: 0, weight: 0 } as GoalRecord['rollup'] });
  const state = (children: GoalRecord[], p = parentGoal): RollupsState => ({
    state: { goals: new Map([p, ...children].map((g) => [g.uuid, g])), childrenOf: new Map([['p', children.map((c) => c.uuid)]]) },
    stored: new Map([['p', stored(p, 7)]]),
    truncated: false,
  });

  it('starts at the goal and the parents it left; a deleted goal only at the parents it left', () => {
    expect(
      rollupStart(change('goal', goal('a', { parent_links: [link('p'), link('q')] }), goal('a', { parent_links: [link('p')] }))),
    ).toEqual(['a', 'q']);
    expect(rollupStart(change('goal', goal('a', { parent_links: [link('p')] })))).toEqual(['p']);
  });

  it('the parent written with its new average at the version read, marked synced, stamped now as a rollup', () => {
    const c = change('goal', child('a', 20), child('a', 40));
    const writes = rollupProjection.project(c, state([child('a', 40), child('b', 60)]), NOW);
    expect(writes.packed).toHaveLength(1);
    const op = writes.packed![0]!;
    const after = replaced(op);
    expect(after.current_progress).toBe(50);
    expect(after.rollup_synced_v).toBe(8);
    expect(after.updated_at).toBe(NOW);
    expect(after.progress_cause).toEqual({ cause: 'rollup', at: NOW });
    expect(op).toMatchObject({ before: { version: 7 } });
  });

  it('nothing when the parent already holds its children average (a replay)', () => {
    const c = change('goal', child('a', 20), child('a', 40));
    const first = rollupProjection.project(c, state([child('a', 40), child('b', 60)]), NOW);
    const recomputed = replaced(first.packed![0]!);
    expect(rollupProjection.project(c, state([child('a', 40), child('b', 60)], recomputed), NOW)).toEqual({});
  });
});

describe('goal-read-models: a new tenant marked ready once; a goal synced', () => {
  const tenant = change('tenant', undefined, { uuid: T });

  it('a new tenant: the marker unless its create wrote one, conditioned on its absence', () => {
    expect(goalReadModelsProjection.project(tenant, { marked: false }, NOW)).toEqual({ transactions: [[newTenantReadyOp(T, NOW)]] });
    expect(newTenantReadyOp(T, NOW)).toEqual(
      putSideOp(keys.readModelState(T), { kind: 'read_models', ready_at: NOW, version: READ_MODELS_VERSION }, { exists: false }),
    );
    expect(goalReadModelsProjection.project(tenant, { marked: true }, NOW)).toEqual({});
  });

  it("a goal's entries that differ, with the goal checked at the version read and the counters they move", () => {
    const g = stored(goal('g'), 5);
    const entry = deleteSideOp({ PK: 'T#t1#goal#g', SK: 'RM#status' }, { equals: { fp: 'f1' } });
    const pending: GoalChange = {
      goal: g,
      uuid: 'g',
      kind: 'key_result',
      entries: [{ op: entry, counters: new Map([['all', { n: -1, nl: 0 }]]) }],
      counters: new Map([['all', { n: -1, nl: 0 }]]),
    };
    const writes = goalReadModelsProjection.project(change('goal', g.record, g.record), { changes: [pending] }, NOW);
    expect(writes.transactions).toHaveLength(1);
    const [check, op, counter] = writes.transactions![0]!;
    expect(check).toEqual(checkVersionOp(goalEntity, g));
    expect(op).toEqual(entry);
    expect(counter).toMatchObject({ op: 'incrementSide', add: { n: -1, nl: 0 } });
    expect(goalReadModelsProjection.project(change('goal', g.record, g.record), { changes: [] }, NOW)).toEqual({ transactions: [] });
  });
});

describe('access-request-notices: the notices missing and one e-mail message', () => {
  const request = {
    uuid: 'r1',
    kind: 'access_request',
    status: 'pending',
    requester_uuid: 'u-req',
    shareable_type: 'document',
    shareable_uuid: 'd1',
    requested_level: 'view',
    notice: { at: AT, recipients: ['u-a', 'u-b'], shareable_title: 'Doc', requested_level: 'view', message: null },
  } as unknown as AccessRequestRecord;
  const c: TableChange = { ...change('access_request'), eventName: 'INSERT', newImage: request as unknown as Record<string, unknown> };
  const requester = { uuid: 'u-req', display_name: 'Req', email: 'req@example.com' } as UserRecord;
  const notes = requestNotifications(request, request.notice!);

  it('each notice not written yet in a transaction of its own (conditioned on its absence), then the message', () => {
    const writes = accessRequestNoticesProjection.project(c, { existing: new Set([notes[0]!.uuid]), requester }, NOW);
    expect(writes).toEqual({
      transactions: [[createOp(notificationEntity, notes[1]!)]],
      messages: [{ queue: ACCESS_REQUEST_QUEUE, body: requestEmailMessage(T, request, request.notice!, requester) }],
    });
  });

  it('a replay finds every notice and queues the message again (the worker skips notices e-mailed); no requester, no message', () => {
    const all = new Set(notes.map((n) => n.uuid));
    expect(accessRequestNoticesProjection.project(c, { existing: all, requester }, NOW).transactions).toEqual([]);
    expect(accessRequestNoticesProjection.project(c, { existing: all, requester: undefined }, NOW)).toEqual({ transactions: [] });
  });
});

describe('webhook-creators: the endpoints of an admin who lost the rights', () => {
  const admin = { uuid: 'u1', role: 'admin', status: 'active', display_name: 'A', email: 'a@example.com' } as UserRecord;
  const demoted = change('user', admin, { ...admin, role: 'member' });
  const endpoint = {
    uuid: 'w1',
    url: 'https://hooks.example.com/x',
    status: 'active',
    creator_uuid: 'u1',
    events: ['*'],
  } as unknown as WebhookRecord;

  it('a step per active endpoint the user created, one after the other, logged only when one was disabled', () => {
    const writes = webhookCreatorsProjection.project(demoted, ['w1', 'w2'], NOW);
    expect(writes.steps).toHaveLength(2);
    expect(writes.concurrency).toBeUndefined(); // one at a time
    expect(writes.log).toEqual({
      message: 'webhooks disabled: creator lost access',
      fields: { change: 'ev-1', user_uuid: 'u1' },
      count: 'disabled',
      onlyIfCounted: true,
    });
    expect(webhookCreatorsProjection.project(demoted, [], NOW)).toEqual({});
  });

  it("each step disables the endpoint with the other admins' notices, conditioned on the endpoint's and the creator's versions", () => {
    const user = stored({ ...admin, role: 'member' } as UserRecord, 9);
    const other = { ...admin, uuid: 'u2' };
    const seen = {
      endpoint: stored(endpoint, 4),
      creator: { record: user.record, user },
      admins: [admin, other],
      noticeUuids: ['n1', 'n2'],
    };
    const writes = creatorCheckStep('w1', 'u1').project(seen, NOW);
    const [disable, check, notice, ...more] = writes.transactions![0]!;
    expect(disable).toEqual(
      replaceOp(webhookEntity, seen.endpoint, {
        ...endpoint,
        status: 'disabled',
        disabled_reason: 'creator_lost_access',
        updated_at: NOW,
      } as WebhookRecord),
    );
    expect(check).toEqual(checkVersionOp(userEntity, user));
    expect(notice).toMatchObject({ op: 'create', record: { uuid: 'n2', recipient_uuid: 'u2', kind: 'webhook.disabled', created_at: NOW } });
    expect(more).toEqual([]); // the creator is not told
    // the creator an admin again (a replay after a re-promotion), or the endpoint gone or taken over: nothing
    expect(creatorCheckStep('w1', 'u1').project({ ...seen, creator: { record: admin, user: stored(admin, 10) } }, NOW)).toEqual({});
    expect(creatorCheckStep('w1', 'u1').project(undefined, NOW)).toEqual({});
  });
});

describe('events: the change events, recorded then published and delivered as the feed holds them', () => {
  const c = change('goal', undefined, goal('g'));
  const events: IdentifiedEvent[] = [{ id: 'evt_1', event: { type: 'goal.created', timestamp: AT, data: { tenant_uuid: T, record: {} } } }];

  it('the built events as the outbound write, logged with the deliveries queued; none built, nothing', () => {
    const writes: ProjectionWrites = outboundEventsProjection.project(c, events, NOW);
    expect(writes).toEqual({
      outbound: { change: c, events },
      log: { message: 'events', fields: { change: 'ev-1', events: ['goal.created evt_1'] }, count: 'deliveries_queued' },
    });
    expect(outboundEventsProjection.project(c, [], NOW)).toEqual({});
  });
});
