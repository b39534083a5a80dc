import { eventually } from './eventually.ts';

/**
 * Contract section 14: lists, filters and counts reflect a write within 2 s (they read indexes AWS updates
 * after the write; the AWS-faithful mode answers them 1 s stale). A list read right after a write waits that
 * long at most, never longer: its last read begins 2 s after the first at the latest (test/support/eventually.ts),
 * and what that read answers, however late under load, is the verdict.
 */
export const LIST_LAG_MS = 2_000;
export const withinListLag = <T>(check: () => Promise<T>): Promise<T> => eventually(check, LIST_LAG_MS);
