import type { Caller } from '#shared/auth/caller.ts';
import type { AppError } from '#shared/errors.ts';
import { newUserRecord, type Role, type UserRecord } from '#shared/domain/users/entity.ts';

export const TENANT = '11111111-1111-4111-8111-111111111111';
export const NOW = '2026-01-02T03:04:05.000Z';
export const LATER = '2026-01-03T00:00:00.000Z';

/** A caller of the given role (its user record a plain active user). */
export function callerAs(role: Role, userId = `${role}-1`): Caller {
  return {
    tenantId: TENANT,
    userId,
    role,
    user: newUserRecord({ email: `${userId}@example.test`, role, creator_uuid: null }, NOW, userId),
  };
}

export const user = (uuid: string, over: Partial<UserRecord> = {}): UserRecord => ({
  ...newUserRecord({ email: `${uuid}@example.test`, creator_uuid: null }, NOW, uuid),
  ...over,
});

/** What `f` returns, its Decision unwrapped (shared/decision.ts): a refused one, or a refusal returned, is thrown. */
function run(f: () => unknown): unknown {
  const r = f();
  if (r instanceof Error) throw r;
  if (r && typeof r === 'object' && 'error' in r && r.error instanceof Error) throw r.error;
  return r;
}

/** The error `f` throws or its Decision refuses with; fails the test when it returns otherwise. */
export function refusal(f: () => unknown): AppError {
  try {
    run(f);
  } catch (err) {
    return err as AppError;
  }
  throw new Error('expected a refusal');
}

/** What `f` answers: `ok`, the code of the first detail of what it throws (or refuses), or the error's name when it has none. */
export function codeOf(f: () => unknown): string {
  try {
    run(f);
  } catch (err) {
    return (err as AppError).details?.[0]?.code ?? (err as Error).name;
  }
  return 'ok';
}
