import { describe, expect, it } from 'vitest';
import { checkinEntity, type CheckinRecord } from '#shared/domain/checkins/entity.ts';
import { claimedLabels, labelsToRead } from '#shared/domain/labels/entity.ts';
import {
  currentLabels,
  decideLabelSync,
  distinctLabels,
  labelNameChanged,
  labelNamesOf,
  labelsMayBeStale,
  namedAsAfter,
  resolveLabels,
} from '#shared/domain/labels/decide.ts';
import { labelNamesProjection } from '#shared/stream/projections/label-names.ts';
import type { TableChange } from '#shared/table-change.ts';

/** Label names kept on goals and check-ins: the pure rules of the commands and of the change stream's projection. */
const NOW = '2025-02-10T12:00:00.000Z';
const names = (list: string[]) => {
  const n = labelNamesOf(list);
  if ('error' in n) throw n.error;
  return n.wanted;
};
const labels = (entries: Array<[string, string]>) => new Map(entries.map(([uuid, name]) => [uuid, { uuid, name }]));

describe('labels named by a command', () => {
  it('an existing label is named as its claim spells it (no label read), a claim without a name from the label read, else created', () => {
    const claims = claimedLabels(
      new Map([
        ['growth', { id: 'l-g', data: { name: 'Growth' } }],
        ['old', { id: 'l-o' }], // written before claims carried the name
      ]),
    );
    expect(labelsToRead(claims)).toEqual(['l-o']);
    const out = resolveLabels(
      names(['GROWTH', 'old', 'New one', 'growth']),
      claims,
      labels([['l-o', 'Old']]),
      ['x1', 'x2', 'x3'],
      'u1',
      NOW,
    );
    expect(out.labels).toEqual([
      { uuid: 'l-g', name: 'Growth' },
      { uuid: 'l-o', name: 'Old' },
      { uuid: 'x3', name: 'New one' },
    ]);
    expect(out.created.map((l) => [l.uuid, l.name, l.creator_uuid, l.created_at])).toEqual([['x3', 'New one', 'u1', NOW]]);
  });

  it('a claim naming no label that can be read is treated as no label (the write then loses the claim and retries)', () => {
    const out = resolveLabels(names(['ghost']), claimedLabels(new Map([['ghost', { id: 'l-gone' }]])), new Map(), ['x1'], 'u1', NOW);
    expect(out.labels).toEqual([{ uuid: 'x1', name: 'ghost' }]);
  });

  it('each label once, first appearance first', () => {
    expect(
      distinctLabels([
        { uuid: 'a', name: 'A' },
        { uuid: 'b', name: 'B' },
        { uuid: 'a', name: 'A2' },
      ]),
    ).toEqual([
      { uuid: 'a', name: 'A' },
      { uuid: 'b', name: 'B' },
    ]);
  });
});

describe('label names kept in sync (label-names projection)', () => {
  const current = new Map([
    ['a', { name: 'Alpha' }],
    ['b', { name: 'Beta' }],
  ]);

  it('names the record’s labels in label_uuids order, leaving out a label deleted since', () => {
    expect(currentLabels(['b', 'gone', 'a'], current)).toEqual([
      { uuid: 'b', name: 'Beta' },
      { uuid: 'a', name: 'Alpha' },
    ]);
  });

  it('writes only a difference: a rename, a delete, an old record without names; nothing when up to date', () => {
    expect(
      decideLabelSync(
        {
          label_uuids: ['a', 'b'],
          labels: [
            { uuid: 'a', name: 'Alpha' },
            { uuid: 'b', name: 'Beta' },
          ],
        },
        current,
      ),
    ).toBeUndefined();
    expect(decideLabelSync({ label_uuids: ['a'], labels: [{ uuid: 'a', name: 'alpha (old)' }] }, current)).toEqual([
      { uuid: 'a', name: 'Alpha' },
    ]);
    expect(
      decideLabelSync(
        {
          label_uuids: ['a', 'gone'],
          labels: [
            { uuid: 'a', name: 'Alpha' },
            { uuid: 'gone', name: 'Gone' },
          ],
        },
        current,
      ),
    ).toEqual([{ uuid: 'a', name: 'Alpha' }]);
    expect(decideLabelSync({ label_uuids: ['b'] }, current)).toEqual([{ uuid: 'b', name: 'Beta' }]);
    expect(decideLabelSync({ label_uuids: [] }, current)).toBeUndefined(); // an old record naming nothing stays as it is
    expect(decideLabelSync({ label_uuids: [], labels: [] }, current)).toBeUndefined();
  });

  it('applied again to its own result, it writes nothing (a replay converges)', () => {
    const record = { label_uuids: ['a', 'b'], labels: [{ uuid: 'a', name: 'old' }] };
    const once = { ...record, labels: decideLabelSync(record, current)! };
    expect(decideLabelSync(once, current)).toBeUndefined();
  });

  it('which goal or check-in changes are checked: new with labels, labels or names changed, old records naming labels', () => {
    const named = { label_uuids: ['a'], labels: [{ uuid: 'a', name: 'Alpha' }] };
    expect(labelsMayBeStale(undefined, named)).toBe(true);
    expect(labelsMayBeStale(undefined, { label_uuids: [], labels: [] })).toBe(false);
    expect(labelsMayBeStale(named, { ...named })).toBe(false); // a check-in moving the goal, a title edit
    expect(labelsMayBeStale(named, { label_uuids: ['a'], labels: [{ uuid: 'a', name: 'Renamed' }] })).toBe(true);
    expect(
      labelsMayBeStale(named, {
        label_uuids: ['a', 'b'],
        labels: [
          { uuid: 'a', name: 'Alpha' },
          { uuid: 'b', name: 'Beta' },
        ],
      }),
    ).toBe(true);
    expect(labelsMayBeStale({ label_uuids: ['a'] }, { label_uuids: ['a'] })).toBe(true); // old record: named on its first change
    expect(labelsMayBeStale({ label_uuids: [] }, { label_uuids: [] })).toBe(false);
    expect(labelsMayBeStale(named, undefined)).toBe(false); // deleted
  });

  it('which label changes fan out: a rename (any spelling) or a delete', () => {
    expect(labelNameChanged({ name: 'A' }, { name: 'a' })).toBe(true);
    expect(labelNameChanged({ name: 'A' }, undefined)).toBe(true);
    expect(labelNameChanged({ name: 'A' }, { name: 'A' })).toBe(false); // a color or group change
    expect(labelNameChanged(undefined, { name: 'A' })).toBe(false); // a new label: nothing names it yet
  });

  it('an event compares the record before with the names it keeps now: bringing names up to date is no change', () => {
    const before = {
      label_uuids: ['a', 'b', 'c'],
      labels: [
        { uuid: 'a', name: 'old a' },
        { uuid: 'b', name: 'B' },
        { uuid: 'c', name: 'C' },
      ],
    };
    // b deleted (names dropped), a renamed: nothing differs once before is named as after
    const synced = {
      label_uuids: ['a', 'b', 'c'],
      labels: [
        { uuid: 'a', name: 'A' },
        { uuid: 'c', name: 'C' },
      ],
    };
    expect(namedAsAfter(before, synced).labels).toEqual(synced.labels);
    // labels replaced by an update: the ones left keep their names as they were
    const relabelled = {
      label_uuids: ['c', 'd'],
      labels: [
        { uuid: 'c', name: 'C' },
        { uuid: 'd', name: 'D' },
      ],
    };
    expect(namedAsAfter(before, relabelled).labels).toEqual([
      { uuid: 'a', name: 'old a' },
      { uuid: 'b', name: 'B' },
      { uuid: 'c', name: 'C' },
    ]);
    // records written before names were kept are presented from the labels read: left as they are
    expect(namedAsAfter({ label_uuids: ['a'] }, synced)).toEqual({ label_uuids: ['a'] });
  });
});

describe('label-names projection: what it accepts', () => {
  const T = 't1';
  const change = (type: string, oldRec?: object, newRec?: object, sk = '#'): TableChange => ({
    eventId: 'e',
    eventName: oldRec && newRec ? 'MODIFY' : newRec ? 'INSERT' : 'REMOVE',
    at: NOW,
    tenantId: T,
    keys: { PK: `T#${T}#${type}#x`, SK: sk },
    oldImage: oldRec ? { kind: type, v: 1, rec: oldRec } : undefined,
    newImage: newRec ? { kind: type, v: 2, rec: newRec } : undefined,
  });
  const label = (name: string) => ({ uuid: 'l', name, is_group: false, parent_uuid: null, color: null });
  const rec = (over: object) => ({ uuid: 'x', label_uuids: ['l'], labels: [{ uuid: 'l', name: 'L' }], ...over });

  it('label renames and deletes; goals and check-ins whose labels may be stale; nothing else', () => {
    expect(labelNamesProjection.accepts(change('label', label('L'), label('M')))).toBe(true);
    expect(labelNamesProjection.accepts(change('label', label('L')))).toBe(true);
    expect(labelNamesProjection.accepts(change('label', label('L'), { ...label('L'), color: '#fff' }))).toBe(false);
    expect(labelNamesProjection.accepts(change('label', undefined, label('L')))).toBe(false);
    expect(labelNamesProjection.accepts(change('goal', undefined, rec({})))).toBe(true);
    expect(labelNamesProjection.accepts(change('goal', rec({}), rec({ title: 'edited' })))).toBe(false);
    expect(labelNamesProjection.accepts(change('checkin', rec({}), rec({ labels: [{ uuid: 'l', name: 'M' }] })))).toBe(true);
    expect(labelNamesProjection.accepts(change('checkin', rec({}), rec({ value: 3 })))).toBe(false);
    expect(labelNamesProjection.accepts(change('goal', undefined, rec({}), 'IX#label#l'))).toBe(false); // an entry item
  });
});

describe('check-in label entries', () => {
  const ci = (over: Partial<CheckinRecord>) => ({ uuid: 'c', goal_uuid: '0000000a', label_uuids: ['l1', 'l2'], ...over }) as CheckinRecord;

  it('are declared for check-ins keeping names, in the check-in list shard; a check-in written before names were kept has none (as in the table)', () => {
    expect(checkinEntity.entries!(ci({ labels: [], list_shards: 2 })).map((e) => `${e.list}@${e.name}#${e.value}`)).toEqual([
      'checkin@goal#0000000a',
      'checkin#0@label#l1',
      'checkin#0@label#l2',
    ]);
    // written under the 16 old shards (no list_shards): where they still are, until its next write
    expect(checkinEntity.entries!(ci({ labels: [] })).map((e) => `${e.list}@${e.name}#${e.value}`)).toEqual([
      'checkin@goal#0000000a',
      'checkin#10@label#l1',
      'checkin#10@label#l2',
    ]);
    expect(checkinEntity.entries!(ci({})).map((e) => `${e.list}@${e.name}#${e.value}`)).toEqual(['checkin@goal#0000000a']);
  });
});
