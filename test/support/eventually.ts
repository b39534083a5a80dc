/**
 * Polls until `check` passes, or rethrows its last failure after the timeout (state derived asynchronously: the
 * change stream, workers). At most 60 s: derived state follows within that (contract 14, the StreamLag alarm), and
 * the run fails when the stream falls 30 s behind (test/setup/global.ts).
 */
export const EVENTUALLY_MAX_MS = 60_000;

export async function eventually<T>(check: () => Promise<T>, timeoutMs = EVENTUALLY_MAX_MS, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}
