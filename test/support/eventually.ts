/**
 * Polls until `check` passes, or rethrows its last failure after the timeout (state derived asynchronously: the
 * change stream, workers). At most 60 s: derived state follows within that (contract 14, the StreamLag alarm), and
 * the run fails when the stream falls 30 s behind (test/setup/global.ts).
 *
 * The timeout bounds when the state must be there, so it is measured by when a check begins, not by when its
 * answer comes back: a check begun before the timeout that fails is followed by one more, and the first check
 * begun at or after the timeout that fails is the last. Under load a read begun in time can answer seconds
 * later with what it read then; without this, that late answer would end the wait before any read was taken
 * past the bound (a list read 0.5 s after its write and answered 2.5 s after it, under the lists' 2 s).
 */
export const EVENTUALLY_MAX_MS = 60_000;

export async function eventually<T>(check: () => Promise<T>, timeoutMs = EVENTUALLY_MAX_MS, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const begun = Date.now();
    try {
      return await check();
    } catch (err) {
      if (begun >= deadline) throw err;
      // the next check begins after the interval, and at the deadline at the latest
      await new Promise((r) => setTimeout(r, Math.max(0, Math.min(intervalMs, deadline - Date.now()))));
    }
  }
}
