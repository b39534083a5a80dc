import { beforeAll, describe, expect, it } from 'vitest';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { putSideOp } from '#shared/db/tx-ops.ts';
import type { Log } from '#shared/logger.ts';
import { commitStep } from '#shared/stream/commit.ts';
import type { ProjectionWrites, Step } from '#shared/stream/projection.ts';

/**
 * The one committer of projections (shared/stream/commit.ts), against a fake client: reads, project, commit in
 * order; a lost race reads and projects again; steps run on their own, bounded, settled before a failure fails.
 */
beforeAll(() => {
  process.env.TABLE_NAME ??= 'unit-table';
});

type Sent = Array<Array<{ Put?: { Item: Record<string, unknown> } }>>;

/** A client whose TransactWriteItems answer `outcomes` in turn ('ok' or a cancelled condition), recording what was sent. */
function fakeData(outcomes: Array<'ok' | 'condition'>): { data: DataCtx; sent: Sent } {
  const sent: Sent = [];
  const db = {
    send: async (cmd: { input: { TransactItems: Sent[number] } }) => {
      sent.push(cmd.input.TransactItems);
      if ((outcomes.shift() ?? 'ok') === 'condition')
        throw Object.assign(new Error('cancelled'), {
          name: 'TransactionCanceledException',
          CancellationReasons: [{ Code: 'ConditionalCheckFailed' }],
        });
      return {};
    },
  };
  return { data: { tenantId: 't1', db } as unknown as DataCtx, sent };
}

const lines: Array<[string, unknown]> = [];
const log = { info: (m: string, f: unknown) => lines.push([m, f]), warn() {}, error() {}, debug() {} } as unknown as Log;
const put = (sk: string, n: number) => putSideOp({ PK: 'T#t1#x', SK: sk }, { n }, { exists: false });

describe('commitStep', () => {
  it('commits the transactions in order; a failed condition reads and projects again, and the second attempt writes what it read', async () => {
    const { data, sent } = fakeData(['ok', 'condition', 'ok', 'ok']);
    let reads = 0;
    const step: Step<number> = {
      reads: async () => ++reads,
      project: (n): ProjectionWrites => ({ transactions: [[put('a', n)], [put('b', n)]] }),
    };
    expect(await commitStep(data, step, log)).toBe(true);
    expect(reads).toBe(2);
    // attempt 1: a committed, b lost; attempt 2: both again, from the second read
    expect(sent.map((t) => `${t[0]!.Put!.Item.SK}=${t[0]!.Put!.Item.n}`)).toEqual(['a=1', 'b=1', 'a=2', 'b=2']);
  });

  it('writes nothing and answers false when project has nothing to do', async () => {
    const { data, sent } = fakeData([]);
    expect(await commitStep(data, { reads: async () => undefined, project: () => ({}) }, log)).toBe(false);
    expect(sent).toEqual([]);
  });

  it('runs steps at most `concurrency` at once, counts those that wrote, and fails only once every step settled', async () => {
    const { data } = fakeData([]);
    let active = 0;
    let peak = 0;
    const done: number[] = [];
    const child = (i: number): Step<unknown> => ({
      reads: async () => {
        active++;
        peak = Math.max(peak, active);
        await new Promise((r) => setTimeout(r, 5));
        active--;
        if (i === 1) throw new Error('step 1 failed');
        done.push(i);
        return i;
      },
      project: () => (i % 2 === 0 ? { transactions: [[put(`s${i}`, i)]] } : {}),
    });
    const parent = (ids: number[]): Step<undefined> => ({
      reads: async () => undefined,
      project: () => ({ steps: ids.map(child), concurrency: 3, log: { message: 'fan-out', fields: { n: ids.length }, count: 'wrote' } }),
    });
    lines.length = 0;
    expect(await commitStep(data, parent([0, 2, 3, 4, 5, 6]), log)).toBe(true);
    expect(peak).toBe(3);
    expect(lines).toEqual([['fan-out', { n: 6, wrote: 4 }]]); // the even ones
    await expect(commitStep(data, parent([0, 1, 2, 3, 4]), log)).rejects.toThrow('step 1 failed');
    expect(done.slice(-4).sort()).toEqual([0, 2, 3, 4]); // every other step ran before the change failed
  });
});
