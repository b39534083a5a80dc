import { describe, expect, it, vi } from 'vitest';

// the refresh's runner, made to fail as a refresh under a burst does (its retry budget run out), or otherwise
const failure = vi.hoisted(() => ({ error: undefined as unknown }));
vi.mock('#shared/command/run.ts', async (original) => ({
  ...(await original<typeof import('#shared/command/run.ts')>()),
  runCommand: async () => {
    throw failure.error;
  },
}));

const { refreshRollupsAfterWrite } = await import('#shared/domain/goals/rollup-writes.ts');
const { ConcurrentUpdateError, TransactionConflictError } = await import('#shared/errors.ts');
import type { DomainCtx } from '#shared/domain/context.ts';

/** A request's write committed, then its rollup refresh: the request answers its 2xx whatever the refresh's contention. */
describe('the rollup refresh after a committed write', () => {
  const ctx = () => {
    const warnings: Array<[string, unknown]> = [];
    return { ctx: { tenantId: 't1', log: { warn: (m: string, e: unknown) => warnings.push([m, e]) } } as unknown as DomainCtx, warnings };
  };

  it('leaves the ancestors to the change stream when its retry budget runs out, and says so in the log', async () => {
    for (const error of [new ConcurrentUpdateError(), new TransactionConflictError()]) {
      failure.error = error;
      const { ctx: c, warnings } = ctx();
      expect(await refreshRollupsAfterWrite(c, ['g1'])).toEqual(new Map());
      expect(warnings).toEqual([['rollup refresh left to the change stream: its retry budget ran out', { goals: ['g1'] }]]);
    }
  });

  it('fails the request on any other error (a 5xx: a retry under the same Idempotency-Key answers with what was written)', async () => {
    failure.error = new Error('DynamoDB is down');
    const { ctx: c, warnings } = ctx();
    await expect(refreshRollupsAfterWrite(c, ['g1'])).rejects.toThrow('DynamoDB is down');
    expect(warnings).toEqual([]);
  });
});
