import { pinnedRequest } from '#shared/domain/webhooks/pinned-request.ts';
import type { SafeTarget } from '#shared/domain/webhooks/url-safety.ts';

export interface PostOutcome {
  ok: boolean;
  statusCode: number | null;
  /** Why it failed (a status, a timeout, a network error), or null. Never includes request headers. */
  error: string | null;
}

/**
 * One delivery attempt: POST the body to the checked address (the URL's host still names the TLS server and
 * the Host header), within `timeoutMs` from start to the end of the answer. Redirects are not followed (a 3xx
 * is a failure); at most `bodyCap` bytes of the answer are read.
 */
export async function postWebhook(
  target: SafeTarget,
  body: string,
  headers: Record<string, string>,
  opts: { timeoutMs: number; bodyCap: number },
): Promise<PostOutcome> {
  const { send, lookup: pinned } = await pinnedRequest(target);
  return new Promise<PostOutcome>((resolve) => {
    let settled = false;
    const done = (o: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const req = send(
      target.url,
      {
        method: 'POST',
        lookup: pinned,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'goal-tracking-webhooks/1',
          'content-length': Buffer.byteLength(body),
          ...headers,
        },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (size < opts.bodyCap) chunks.push(c.subarray(0, opts.bodyCap - size));
          size += c.length;
          if (size >= opts.bodyCap) res.destroy(); // enough to explain a failure; the rest is not read
        });
        const finish = () => {
          const ok = status >= 200 && status < 300;
          const text = Buffer.concat(chunks).toString('utf8').slice(0, 200);
          done({
            ok,
            statusCode: status,
            error: ok
              ? null
              : `HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}${text ? `: ${text}` : ''}`,
          });
        };
        res.on('end', finish);
        res.on('close', finish);
        res.on('error', finish);
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      done({ ok: false, statusCode: null, error: `no answer within ${opts.timeoutMs} ms` });
    }, opts.timeoutMs);
    req.on('error', (err) => done({ ok: false, statusCode: null, error: err.message }));
    req.end(body);
  });
}
