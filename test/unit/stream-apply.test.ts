import { describe, expect, it } from 'vitest';
import { applyChange } from '#shared/stream/apply.ts';
import type { Projection } from '#shared/stream/projection.ts';
import type { TableChange } from '#shared/table-change.ts';

const change: TableChange = {
  eventId: 'e1',
  eventName: 'MODIFY',
  at: '2026-01-01T00:00:00.000Z',
  tenantId: 't',
  keys: { PK: 'T#t#goal#g', SK: '#' },
};
const ctx = { data: { tenantId: 't' }, log: { debug() {}, info() {}, warn() {}, error() {} } } as never;
const tick = () => new Promise((r) => setTimeout(r, 5));

function recorder() {
  const events: string[] = [];
  const projection = (name: string, opts: { after?: string[]; accepts?: boolean; fails?: boolean } = {}): Projection => ({
    name,
    ...(opts.after ? { after: opts.after } : {}),
    accepts: () => opts.accepts ?? true,
    reads: async () => {
      events.push(`${name} start`);
      await tick();
      if (opts.fails) throw new Error(`${name} failed`);
      events.push(`${name} end`);
    },
    project: () => ({}),
  });
  return { events, projection };
}

describe('applyChange: one change offered to every projection', () => {
  it('runs projections at once, except that one waits for those it names in `after`', async () => {
    const { events, projection } = recorder();
    const applied = await applyChange(
      change,
      [projection('current-values'), projection('rollups', { after: ['current-values'] }), projection('history'), projection('events')],
      ctx,
    );
    expect(applied).toEqual(['current-values', 'rollups', 'history', 'events']);
    // history and events started before current values ended; rollups only after it
    expect(events.indexOf('history start')).toBeLessThan(events.indexOf('current-values end'));
    expect(events.indexOf('rollups start')).toBeGreaterThan(events.indexOf('current-values end'));
  });

  it('skips what does not accept the change; a dependency that does not accept it does not hold the other back', async () => {
    const { events, projection } = recorder();
    expect(
      await applyChange(
        change,
        [projection('current-values', { accepts: false }), projection('rollups', { after: ['current-values'] })],
        ctx,
      ),
    ).toEqual(['rollups']);
    expect(events).toEqual(['rollups start', 'rollups end']);
  });

  it('fails the change when any projection fails, after the others have settled; a dependent of the failed one never runs', async () => {
    const { events, projection } = recorder();
    await expect(
      applyChange(
        change,
        [projection('current-values', { fails: true }), projection('rollups', { after: ['current-values'] }), projection('history')],
        ctx,
      ),
    ).rejects.toThrow('current-values failed');
    expect(events).toContain('history end');
    expect(events.some((e) => e.startsWith('rollups'))).toBe(false);
  });
});
