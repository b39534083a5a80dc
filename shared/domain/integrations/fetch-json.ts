import { pinnedRequest } from '#shared/domain/webhooks/pinned-request.ts';
import type { SafeTarget } from '#shared/domain/webhooks/url-safety.ts';

/** A sync's fetch: the body read (at most the cap), or why there is none. Never throws. */
export type FetchOutcome = { ok: true; body: string } | { ok: false; error: string };

/**
 * GET the checked address (the URL's host still names the TLS server and the Host header), within `timeoutMs`
 * from start to the end of the body. Redirects are not followed (a 3xx fails: a redirect could lead past the
 * address check); a body over `bodyCap` bytes fails as soon as it passes the cap, without reading the rest.
 */
export async function fetchJson(
  target: SafeTarget,
  headers: Record<string, string>,
  opts: { timeoutMs: number; bodyCap: number },
): Promise<FetchOutcome> {
  const { send, lookup: pinned } = await pinnedRequest(target);
  return new Promise<FetchOutcome>((resolve) => {
    let settled = false;
    const done = (o: FetchOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(o);
    };
    const req = send(
      target.url,
      {
        method: 'GET',
        lookup: pinned,
        headers: { accept: 'application/json', 'user-agent': 'goal-tracking-data-sources/1', ...headers },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status >= 300) {
          res.resume();
          return done({ ok: false, error: `HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}` });
        }
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > opts.bodyCap)
          return done({ ok: false, error: `the answer is larger than ${opts.bodyCap} bytes` });
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > opts.bodyCap) return done({ ok: false, error: `the answer is larger than ${opts.bodyCap} bytes` });
          chunks.push(c);
        });
        res.on('end', () => done({ ok: true, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (err) => done({ ok: false, error: err.message }));
        res.on('close', () => done({ ok: false, error: 'the connection closed before the end of the answer' }));
      },
    );
    const timer = setTimeout(() => done({ ok: false, error: `no answer within ${opts.timeoutMs} ms` }), opts.timeoutMs);
    req.on('error', (err) => done({ ok: false, error: err.message }));
    req.end();
  });
}
