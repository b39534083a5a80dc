import { requestPinned, statusProblem } from '#shared/outbound/pinned-request.ts';
import type { SafeTarget } from '#shared/outbound/url-safety.ts';

export interface PostOutcome {
  ok: boolean;
  statusCode: number | null;
  /** Why it failed (a status, a timeout, a network error), or null. Never includes request headers. */
  error: string | null;
}

/**
 * One delivery attempt: POST the body to the checked address (shared/outbound/pinned-request.ts), within
 * `timeoutMs` from start to the end of the answer. A 3xx is a failure; at most `bodyCap` bytes of the answer are
 * read, the first 200 characters of them explain a failure.
 */
export async function postWebhook(
  target: SafeTarget,
  body: string,
  headers: Record<string, string>,
  opts: { timeoutMs: number; bodyCap: number },
): Promise<PostOutcome> {
  const answer = await requestPinned(target, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'goal-tracking-webhooks/1',
      'content-length': Buffer.byteLength(body),
      ...headers,
    },
    body,
    timeoutMs: opts.timeoutMs,
    bodyCap: opts.bodyCap,
    overCap: 'keep-first',
  });
  if (answer.status === null) return { ok: false, statusCode: null, error: answer.error };
  const problem = statusProblem(answer.status);
  if (!problem) return { ok: true, statusCode: answer.status, error: null };
  const text = answer.body.slice(0, 200);
  return { ok: false, statusCode: answer.status, error: `${problem}${text ? `: ${text}` : ''}` };
}
