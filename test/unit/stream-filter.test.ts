import { describe, expect, it } from 'vitest';
import { ENTITY_SK, ENTRY_SK_PREFIX, READ_MODEL_SK_PREFIX, REFERENCE_SK_PREFIX } from '#shared/db/keys.ts';
import { LIMITER_SK } from '#shared/db/rate-limit-store.ts';
import { IDEMPOTENCY_SK } from '#shared/db/idempotency-store.ts';
import { streamProcessorRow } from '#shared/routes/stream.ts';
import type { TableChange } from '#shared/table-change.ts';
import { projections } from '#shared/stream/projections.ts';

/**
 * The stream's event source delivers only changes of items with the sort keys of `streamProcessorRow.sortKeys`
 * (entity items, `#`): safe only while no projection derives anything from another item. Each projection is shown
 * changes that would interest it on an entity item, under every other sort key the table holds.
 */
const T = '00000000-0000-4000-8000-000000000001';
const goal = {
  uuid: 'g1',
  type: 'objective',
  title: 'a',
  current_status: 'on_track',
  current_progress: 10,
  current_value: 1,
  owner_uuids: [],
  label_uuids: [],
  team_uuids: [],
  delegate_uuids: [],
  parent_links: [],
  visibility: 'public',
  visible_entities: [],
  time_period_uuid: 'p',
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
};
const images: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
  [
    'goal',
    { kind: 'goal', v: 1, rec: goal },
    {
      kind: 'goal',
      v: 2,
      rec: { ...goal, current_status: 'behind', current_progress: 50, label_uuids: ['l1'], labels: [{ uuid: 'l1', name: 'x' }] },
    },
  ],
  // moved under another first parent: its path changes (the goal-paths projection)
  [
    'goal',
    { kind: 'goal', v: 2, rec: { ...goal, path: 'g1' } },
    { kind: 'goal', v: 3, rec: { ...goal, parent_links: [{ parent_uuid: 'g0', contribution_percent: 100 }], path: 'g0/g1' } },
  ],
  [
    'checkin',
    { kind: 'checkin', v: 1, rec: { uuid: 'c1', goal_uuid: 'g1', value: 1, label_uuids: [] } },
    { kind: 'checkin', v: 2, rec: { uuid: 'c1', goal_uuid: 'g1', value: 2, label_uuids: ['l1'] } },
  ],
  ['label', { kind: 'label', v: 1, rec: { uuid: 'l1', name: 'a' } }, { kind: 'label', v: 2, rec: { uuid: 'l1', name: 'b' } }],
  ['tenant', undefined as never, { kind: 'tenant', v: 1, rec: { uuid: T } }],
  [
    'access_request',
    { kind: 'access_request', uuid: 'r0', status: 'resolved' },
    { kind: 'access_request', uuid: 'r1', status: 'pending', notice: { at: '2026-01-01T00:00:00.000Z', recipients: ['u1'] } },
  ],
  [
    'user',
    { kind: 'user', v: 1, rec: { uuid: 'u1', role: 'admin', status: 'active' } },
    { kind: 'user', v: 2, rec: { uuid: 'u1', role: 'member', status: 'active' } },
  ],
];
const change = (
  type: string,
  sk: string,
  oldImage: Record<string, unknown> | undefined,
  newImage: Record<string, unknown>,
  eventName: TableChange['eventName'],
): TableChange => ({
  eventId: 'e',
  eventName,
  at: '2026-01-01T00:00:00.000Z',
  tenantId: T,
  keys: { PK: `T#${T}#${type}#x1`, SK: sk },
  ...(oldImage ? { oldImage } : {}),
  newImage,
});

describe('the stream processor event filter', () => {
  it('delivers entity items only', () => {
    expect(streamProcessorRow.sortKeys).toEqual([ENTITY_SK]);
  });

  it('the cases below interest some projection on an entity item (the check is not vacuous)', () => {
    for (const [type, before, after] of images) {
      const name = before ? 'MODIFY' : 'INSERT';
      expect(
        projections.some((p) => p.accepts(change(type, ENTITY_SK, before, after, name))),
        type,
      ).toBe(true);
    }
  });

  it('a moved goal interests the goal-paths projection on its entity item', () => {
    const [, before, after] = images[1]!;
    expect(projections.filter((p) => p.accepts(change('goal', ENTITY_SK, before, after, 'MODIFY'))).map((p) => p.name)).toContain(
      'goal-paths',
    );
  });

  it('no projection accepts a change of an item under any other sort key', () => {
    const others = [
      `${ENTRY_SK_PREFIX}owner#u1`,
      `${REFERENCE_SK_PREFIX}x`,
      `${READ_MODEL_SK_PREFIX}status`,
      LIMITER_SK,
      IDEMPOTENCY_SK,
      '2026-01-01T00:00:00.0#0',
      'H#0000000001',
    ];
    for (const sk of others)
      for (const [type, before, after] of images)
        for (const name of ['INSERT', 'MODIFY', 'REMOVE'] as const) {
          const accepted = projections.filter((p) => p.accepts(change(type, sk, before, after, name))).map((p) => p.name);
          expect(accepted, `${type} under ${sk}, ${name}`).toEqual([]);
        }
  });
});
