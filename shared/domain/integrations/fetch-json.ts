import { requestPinned, statusProblem } from '#shared/outbound/pinned-request.ts';
import type { SafeTarget } from '#shared/outbound/url-safety.ts';

/** A sync's fetch: the body read (at most the cap), or why there is none. Never throws. */
export type FetchOutcome = { ok: true; body: string } | { ok: false; error: string };

/**
 * GET the checked address (shared/outbound/pinned-request.ts), within `timeoutMs` from start to the end of the
 * body. A 3xx fails; a body over `bodyCap` bytes fails as soon as it passes the cap, without reading the rest.
 */
export async function fetchJson(
  target: SafeTarget,
  headers: Record<string, string>,
  opts: { timeoutMs: number; bodyCap: number },
): Promise<FetchOutcome> {
  const answer = await requestPinned(target, {
    method: 'GET',
    headers: { accept: 'application/json', 'user-agent': 'goal-tracking-data-sources/1', ...headers },
    timeoutMs: opts.timeoutMs,
    bodyCap: opts.bodyCap,
    overCap: 'whole',
  });
  if (answer.status === null) return { ok: false, error: answer.error };
  const problem = statusProblem(answer.status);
  return problem ? { ok: false, error: problem } : { ok: true, body: answer.body };
}
