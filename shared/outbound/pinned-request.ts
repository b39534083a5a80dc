import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { SafeTarget } from '#shared/outbound/url-safety.ts';

/**
 * One outbound HTTP request to a tenant-named URL (a webhook delivery, a data source's fetch), sent to the address
 * the SSRF check (url-safety.ts, resolveSafeTarget) resolved and allowed: the DNS lookup is pinned to it, so a
 * second resolution cannot lead elsewhere (DNS rebinding); the URL's host still names the TLS server and the Host
 * header. Redirects are not followed (a redirect could lead past the address check). http: is for the local stack
 * only (deployed targets are https), and node:http is imported then, not at cold start: a static import of it cost
 * the webhook worker ~9 ms of CPU at init.
 */
export interface PinnedCall {
  method: 'GET' | 'POST';
  headers: Record<string, string | number>;
  body?: string;
  /** From the start of the request to the end of the answer. */
  timeoutMs: number;
  /** At most this many bytes of the answer are read. */
  bodyCap: number;
  /**
   * What an answer over `bodyCap` means. `keep-first`: the body is read only to explain an answer, so its first
   * `bodyCap` bytes are kept and the rest is not read (the answer ends there). `whole`: the body is the value
   * asked for, so an answer that does not fit fails (as soon as it declares or passes the cap), and the body of an
   * answer that is not 2xx is not read at all.
   */
  overCap: 'keep-first' | 'whole';
}

/** The answer: its status and the body read (empty when not read), or why there is none. Never thrown. */
export type PinnedAnswer = { status: number; body: string } | { status: null; error: string };

/** `HTTP <status>` for an answer that is not 2xx (a 3xx says that redirects are not followed), undefined for a 2xx. */
export function statusProblem(status: number): string | undefined {
  if (status >= 200 && status < 300) return undefined;
  return `HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`;
}

/** Sends `call` to the checked `target`. */
export async function requestPinned(target: SafeTarget, call: PinnedCall): Promise<PinnedAnswer> {
  const { send, lookup } = await pinnedTo(target);
  return new Promise<PinnedAnswer>((resolve) => {
    let settled = false;
    // `cut`: the answer was not read to its end (a failure, or a body not wanted), so the connection goes with it
    const done = (answer: PinnedAnswer, cut: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (cut) req.destroy();
      resolve(answer);
    };
    const fail = (error: string) => done({ status: null, error }, true);
    const req = send(target.url, { method: call.method, lookup, headers: call.headers }, (res) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      const answer = () => ({ status, body: Buffer.concat(chunks).toString('utf8') });
      if (call.overCap === 'keep-first') {
        res.on('data', (c: Buffer) => {
          if (size < call.bodyCap) chunks.push(c.subarray(0, call.bodyCap - size));
          size += c.length;
          if (size >= call.bodyCap) res.destroy(); // enough to explain the answer; the rest is not read
        });
        // whatever ends the answer, what was read of it is the answer
        for (const end of ['end', 'close', 'error']) res.on(end, () => done(answer(), false));
        return;
      }
      if (statusProblem(status)) {
        res.resume();
        return done({ status, body: '' }, true);
      }
      const declared = Number(res.headers['content-length']);
      const tooLarge = `the answer is larger than ${call.bodyCap} bytes`;
      if (Number.isFinite(declared) && declared > call.bodyCap) return fail(tooLarge);
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > call.bodyCap) return fail(tooLarge);
        chunks.push(c);
      });
      res.on('end', () => done(answer(), true));
      res.on('error', (err) => fail(err.message));
      res.on('close', () => fail('the connection closed before the end of the answer'));
    });
    const timer = setTimeout(() => fail(`no answer within ${call.timeoutMs} ms`), call.timeoutMs);
    req.on('error', (err) => fail(err.message));
    req.end(call.body);
  });
}

/** The request function for the target's scheme and a DNS lookup that answers only the checked address. */
async function pinnedTo(target: SafeTarget): Promise<{ send: typeof httpsRequest; lookup: LookupFunction }> {
  const lookup: LookupFunction = (_host, options, callback) => {
    const family = target.address.includes(':') ? 6 : 4;
    if ((options as { all?: boolean }).all)
      (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [
        { address: target.address, family },
      ]);
    else callback(null, target.address, family);
  };
  const send = target.url.protocol === 'https:' ? httpsRequest : (await import('node:http')).request;
  return { send, lookup };
}
