import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { GoalRecord } from '#shared/domain/goals/entity.ts';
import {
  aggregateOf,
  aggregateProgress,
  contributionTo,
  parentDeltas,
  planAncestorDeltas,
  planRollupWrites,
} from '#shared/domain/goals/progress.ts';
import { fittedTo, planGoalWrite } from '#shared/domain/goals/rollup-plan.ts';

const rollupProgress = (parentUuid: string, children: GoalRecord[]) => aggregateProgress(aggregateOf(parentUuid, children));

const NOW = '2026-01-01T00:00:00.000Z';

type Mode = 'manual' | 'rollup';
const goal = (uuid: string, mode: Mode, progress: number | null, links: Array<[string, number]> = [], extra: Partial<GoalRecord> = {}) =>
  ({
    uuid,
    progress_mode: mode,
    current_progress: progress,
    parent_links: links.map(([parent_uuid, contribution_percent]) => ({ parent_uuid, contribution_percent })),
    discarded_at: null,
    archived_at: null,
    updated_at: '2025-01-01T00:00:00.000Z',
    ...extra,
  }) as unknown as GoalRecord;

/** A rollup goal with the aggregate of `children` (as a recompute would have left it). */
const withAggregate = (g: GoalRecord, children: GoalRecord[]): GoalRecord => {
  const rollup = aggregateOf(g.uuid, children);
  return { ...g, rollup, current_progress: aggregateProgress(rollup) };
};

describe('rollup aggregates (integer hundredths)', () => {
  it('a child adds its weight and weight × progress; no progress counts 0; discarded, archived, unlinked or zero-weight adds nothing', () => {
    expect(contributionTo('P', goal('a', 'manual', 33.33, [['P', 25]]))).toEqual({ sum: 2500 * 3333, weight: 2500 });
    expect(contributionTo('P', goal('a', 'manual', null, [['P', 100]]))).toEqual({ sum: 0, weight: 10000 });
    expect(contributionTo('P', goal('a', 'manual', 50, [['Q', 100]]))).toEqual({ sum: 0, weight: 0 });
    expect(contributionTo('P', goal('a', 'manual', 50, [['P', 0]]))).toEqual({ sum: 0, weight: 0 });
    expect(contributionTo('P', goal('a', 'manual', 50, [['P', 100]], { discarded_at: NOW }))).toEqual({ sum: 0, weight: 0 });
    expect(contributionTo('P', goal('a', 'manual', 50, [['P', 100]], { archived_at: NOW }))).toEqual({ sum: 0, weight: 0 });
    expect(contributionTo('P', undefined)).toEqual({ sum: 0, weight: 0 });
    // linked twice: the first link counts, once
    expect(
      aggregateOf('P', [
        goal('a', 'manual', 10, [
          ['P', 30],
          ['P', 70],
        ]),
      ]),
    ).toEqual({ sum: 3000 * 1000, weight: 3000 });
  });

  it('progress is the exact weighted mean to 2 decimals, halves rounded up, with no float noise', () => {
    // (71.25*300 + 100*100) / 400 = 78.4375
    expect(rollupProgress('P', [goal('k', 'rollup', 71.25, [['P', 300]]), goal('k2', 'manual', 100, [['P', 100]])])).toBe(78.44);
    // 0.1 + 0.2 style inputs: (0.1 + 0.2) / 2 = 0.15 exactly
    expect(rollupProgress('P', [goal('a', 'manual', 0.1, [['P', 100]]), goal('b', 'manual', 0.2, [['P', 100]])])).toBe(0.15);
    expect(rollupProgress('P', [goal('a', 'manual', 0.01, [['P', 100]]), goal('b', 'manual', 0, [['P', 100]])])).toBe(0.01); // 0.005 up
    expect(aggregateProgress({ sum: 0, weight: 0 })).toBeNull();
  });

  it('parentDeltas: a progress move, a re-weighting, a new and a removed link, a discard', () => {
    const before = goal('c', 'manual', 40, [
      ['P', 100],
      ['Q', 50],
    ]);
    expect(parentDeltas(before, { ...before, current_progress: 60 })).toEqual(
      new Map([
        ['P', { sum: 10000 * 2000, weight: 0 }],
        ['Q', { sum: 5000 * 2000, weight: 0 }],
      ]),
    );
    expect(
      parentDeltas(
        before,
        goal('c', 'manual', 40, [
          ['P', 75],
          ['R', 100],
        ]),
      ),
    ).toEqual(
      new Map([
        ['P', { sum: -2500 * 4000, weight: -2500 }],
        ['Q', { sum: -5000 * 4000, weight: -5000 }],
        ['R', { sum: 10000 * 4000, weight: 10000 }],
      ]),
    );
    expect(parentDeltas(before, { ...before, discarded_at: NOW }).get('P')).toEqual({ sum: -10000 * 4000, weight: -10000 });
    expect(parentDeltas(before, { ...before, title: 'renamed' } as GoalRecord).size).toBe(0);
  });
});

describe('planAncestorDeltas (pure)', () => {
  it('moves a lattice children first, each goal once, with the progress_cause marker on every goal whose progress moved', () => {
    // a, b under m1 and m2; m1, m2 under t1 and t2 (every link weight 100)
    const a = goal('a', 'manual', 50, [
      ['m1', 100],
      ['m2', 100],
    ]);
    const b = goal('b', 'manual', 0, [
      ['m1', 100],
      ['m2', 100],
    ]);
    const m1 = withAggregate(
      goal('m1', 'rollup', null, [
        ['t1', 100],
        ['t2', 100],
      ]),
      [a, b],
    );
    const m2 = withAggregate(
      goal('m2', 'rollup', null, [
        ['t1', 100],
        ['t2', 100],
      ]),
      [a, b],
    );
    const t1 = withAggregate(goal('t1', 'rollup', null), [m1, m2]);
    const t2 = withAggregate(goal('t2', 'manual', 7), [m1, m2]);
    expect([m1, m2, t1].map((g) => g.current_progress)).toEqual([25, 25, 25]);
    const plan = planAncestorDeltas(a, { ...a, current_progress: 100 }, new Map([m1, m2, t1, t2].map((g) => [g.uuid, g])), NOW);
    expect(plan.complete).toBe(true);
    expect([...plan.writes.keys()]).toEqual(['m1', 'm2', 't1']);
    expect([...plan.writes.values()].map((g) => [g.current_progress, g.progress_cause, g.updated_at])).toEqual([
      [50, { cause: 'rollup', at: NOW }, NOW],
      [50, { cause: 'rollup', at: NOW }, NOW],
      [50, { cause: 'rollup', at: NOW }, NOW],
    ]);
    // t2 is manual: it keeps no aggregate, but is checked at the version read (a concurrent switch to rollup retries)
    expect(plan.checks).toEqual(['t2']);
  });

  it('writes an aggregate that moved without moving progress, and goes no further up', () => {
    const a = goal('a', 'manual', 10, [['p', 100]]);
    const b = goal('b', 'manual', 20, [['p', 100]]);
    const p = withAggregate(goal('p', 'rollup', null, [['q', 100]]), [a, b, goal('c', 'manual', 0, [['p', 100]])]); // (10+20+0)/3 = 10
    const q = withAggregate(goal('q', 'rollup', null), [p]);
    // a: 10 -> 10.01 moves the sum by 1 hundredth x weight; the mean stays 10.00
    const plan = planAncestorDeltas(a, { ...a, current_progress: 10.01 }, new Map([p, q].map((g) => [g.uuid, g])), NOW);
    expect(plan.complete).toBe(true);
    expect([...plan.writes.keys()]).toEqual(['p']);
    expect(plan.writes.get('p')).toMatchObject({
      current_progress: 10,
      rollup: { sum: 10000 * 3001, weight: 30000 },
      updated_at: p.updated_at,
    });
  });

  it('is incomplete (recompute instead) without an aggregate, with a drifted one, for a parent not read, and on a cycle', () => {
    const c = goal('c', 'manual', 0, [['p', 100]]);
    const moved = { ...c, current_progress: 80 };
    expect(planAncestorDeltas(c, moved, new Map([['p', goal('p', 'rollup', 0)]]), NOW).complete).toBe(false);
    expect(
      planAncestorDeltas(c, moved, new Map([['p', goal('p', 'rollup', 0, [], { rollup: { sum: 5, weight: -1 } })]]), NOW).complete,
    ).toBe(false);
    expect(planAncestorDeltas(c, moved, new Map(), NOW).complete).toBe(false);
    const x = goal('x', 'rollup', 0, [['y', 100]], { rollup: { sum: 0, weight: 10000 } });
    const y = goal('y', 'rollup', 0, [['x', 100]], { rollup: { sum: 0, weight: 10000 } });
    expect(
      planAncestorDeltas(
        goal('c', 'manual', 0, [['x', 100]]),
        goal('c', 'manual', 50, [['x', 100]]),
        new Map([x, y].map((g) => [g.uuid, g])),
        NOW,
      ).complete,
    ).toBe(false);
  });

  /**
   * The property the aggregates exist for: whatever the hierarchy (a lattice of three levels, weights to 2
   * decimals, manual goals among the rollup ones) and whatever sequence of child changes (progress, weight,
   * discard, archive), applying each change's deltas leaves every rollup goal exactly where a recompute from
   * its children puts it.
   */
  it('deltas applied change after change equal a recompute from scratch (property)', () => {
    const weight = fc.integer({ min: 0, max: 10000 }).map((n) => n / 100);
    const progress = fc.option(
      fc.integer({ min: 0, max: 10000 }).map((n) => n / 100),
      { nil: null },
    );
    const hierarchy = fc.record({
      leaves: fc.array(
        fc.record({
          progress,
          parents: fc.uniqueArray(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 3 }),
          weights: fc.array(weight, { minLength: 3, maxLength: 3 }),
        }),
        { minLength: 1, maxLength: 8 },
      ),
      mids: fc.array(
        fc.record({
          rollup: fc.boolean(),
          parents: fc.uniqueArray(fc.integer({ min: 0, max: 1 }), { maxLength: 2 }),
          weights: fc.array(weight, { minLength: 2, maxLength: 2 }),
        }),
        { minLength: 4, maxLength: 4 },
      ),
      tops: fc.array(fc.boolean(), { minLength: 2, maxLength: 2 }),
    });
    const change = fc.record({
      leaf: fc.nat(),
      kind: fc.constantFrom('progress', 'weight', 'discard', 'archive', 'restore'),
      progress,
      weight,
      parent: fc.nat(),
    });
    fc.assert(
      fc.property(hierarchy, fc.array(change, { minLength: 1, maxLength: 12 }), ({ leaves, mids, tops }, changes) => {
        const goals = new Map<string, GoalRecord>();
        leaves.forEach((l, i) =>
          goals.set(
            `l${i}`,
            goal(
              `l${i}`,
              'manual',
              l.progress,
              l.parents.map((p) => [`m${p}`, l.weights[p % 3]!]),
            ),
          ),
        );
        mids.forEach((m, i) =>
          goals.set(
            `m${i}`,
            goal(
              `m${i}`,
              m.rollup ? 'rollup' : 'manual',
              null,
              m.parents.map((p) => [`t${p}`, m.weights[p]!]),
            ),
          ),
        );
        tops.forEach((rollup, i) => goals.set(`t${i}`, goal(`t${i}`, rollup ? 'rollup' : 'manual', null)));
        const childrenOf = new Map<string, string[]>();
        for (const g of goals.values())
          for (const l of g.parent_links) childrenOf.set(l.parent_uuid, [...new Set([...(childrenOf.get(l.parent_uuid) ?? []), g.uuid])]);
        for (const id of [...goals.keys()].filter((id) => !id.startsWith('l'))) childrenOf.set(id, childrenOf.get(id) ?? []);
        /** Every rollup goal summed from scratch, bottom up (what a recompute converges to). */
        const recompute = () => {
          const state = new Map(goals);
          for (const id of ['m0', 'm1', 'm2', 'm3', 't0', 't1']) {
            const g = state.get(id)!;
            if (g.progress_mode !== 'rollup') continue;
            const rollup = aggregateOf(
              id,
              (childrenOf.get(id) ?? []).map((c) => state.get(c)!),
            );
            state.set(id, { ...g, rollup, current_progress: aggregateProgress(rollup) });
          }
          return state;
        };
        for (const [id, g] of recompute()) goals.set(id, g);
        for (const ch of changes) {
          const id = `l${ch.leaf % leaves.length}`;
          const before = goals.get(id)!;
          const after: GoalRecord =
            ch.kind === 'progress'
              ? { ...before, current_progress: ch.progress }
              : ch.kind === 'weight'
                ? {
                    ...before,
                    parent_links: before.parent_links.map((l, i) =>
                      i === ch.parent % before.parent_links.length ? { ...l, contribution_percent: ch.weight } : l,
                    ),
                  }
                : ch.kind === 'discard'
                  ? { ...before, discarded_at: NOW }
                  : ch.kind === 'archive'
                    ? { ...before, archived_at: NOW }
                    : { ...before, discarded_at: null, archived_at: null };
          const above = new Map([...goals].filter(([k]) => !k.startsWith('l')));
          const plan = planAncestorDeltas(before, after, above, NOW);
          expect(plan.complete).toBe(true);
          goals.set(id, after);
          for (const [k, g] of plan.writes) goals.set(k, g);
          // every goal a delta reached but that keeps no aggregate is checked, and only those
          for (const k of plan.checks) expect(goals.get(k)!.progress_mode).toBe('manual');
          const truth = recompute();
          for (const k of above.keys()) {
            if (goals.get(k)!.progress_mode !== 'rollup') continue;
            expect([k, goals.get(k)!.rollup, goals.get(k)!.current_progress]).toEqual([
              k,
              truth.get(k)!.rollup,
              truth.get(k)!.current_progress,
            ]);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('planRollupWrites (pure)', () => {
  it('writes the aggregate of a goal whose progress is right but whose aggregate is missing, without moving anything above', () => {
    const l = goal('l', 'manual', 10, [['p', 100]]);
    const p = goal('p', 'rollup', 10, [['q', 100]]);
    const q = goal('q', 'rollup', 0);
    const writes = planRollupWrites(
      {
        goals: new Map([l, p, q].map((g) => [g.uuid, g])),
        childrenOf: new Map([
          ['p', ['l']],
          ['q', ['p']],
        ]),
      },
      ['l'],
    );
    expect(writes).toEqual(new Map([['p', { progress: 10, rollup: { sum: 10000 * 1000, weight: 10000 } }]]));
  });
});

describe('planGoalWrite (pure): a goal write with the ancestors that move with it', () => {
  const stored = (record: GoalRecord, version = 3) => ({ record, version });
  const above = (...goals: GoalRecord[]) => ({ stored: new Map(goals.map((g) => [g.uuid, stored(g)])), truncated: false });

  it('a create under a rollup parent moves its aggregate by the new child (its weight, no progress yet) and marks the goal synced at version 1', () => {
    const sibling = goal('s', 'manual', 80, [['P', 100]]);
    const P = withAggregate(goal('P', 'rollup', null), [sibling]);
    const child = goal('c', 'manual', null, [['P', 100]]);
    const w = planGoalWrite(undefined, child, above(P), NOW);
    expect(w.synced).toBe(true);
    expect(w.goal.rollup_synced_v).toBe(1);
    expect(w.ancestors.map((a) => [a.after.uuid, a.after.rollup, a.after.current_progress, a.after.rollup_synced_v])).toEqual([
      ['P', aggregateOf('P', [sibling, child]), 40, 4],
    ]);
    expect(w.checks).toEqual([]);
  });

  it('a check-in under a manual parent checks the parent at its version and writes nothing above', () => {
    const P = goal('P', 'manual', 10);
    const before = goal('k', 'manual', 10, [['P', 100]]);
    const w = planGoalWrite(stored(before, 7), { ...before, current_progress: 60 }, above(P), NOW);
    expect([w.synced, w.goal.rollup_synced_v, w.ancestors, w.checks.map((c) => c.record.uuid)]).toEqual([true, 8, [], ['P']]);
  });

  it('unsynced (recomputed after the commit) for a rollup parent without an aggregate, a cut ancestry, or a mode change; fittedTo unsyncs a plan over one transaction', () => {
    const before = goal('k', 'manual', 10, [['P', 100]]);
    const after = { ...before, current_progress: 60 };
    expect(planGoalWrite(stored(before), after, above(goal('P', 'rollup', 10)), NOW).synced).toBe(false);
    expect(planGoalWrite(stored(before), after, { ...above(goal('P', 'manual', 10)), truncated: true }, NOW).synced).toBe(false);
    expect(planGoalWrite(stored(before), { ...after, progress_mode: 'rollup' }, above(), NOW).synced).toBe(false);
    const P = withAggregate(goal('P', 'rollup', null), [before]);
    const w = planGoalWrite(stored(before), after, above(P), NOW);
    expect(fittedTo(w, 98)).toBe(w);
    expect(fittedTo(w, 99)).toMatchObject({ synced: false, ancestors: [], checks: [], goal: { rollup_synced_v: null } });
  });
});
