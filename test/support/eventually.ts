/** Polls until `check` passes, or rethrows its last failure after the timeout (state derived asynchronously: the change stream, workers). */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 140_000, intervalMs = 100): Promise<T> {
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
