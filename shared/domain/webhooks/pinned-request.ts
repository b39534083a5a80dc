import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { SafeTarget } from '#shared/domain/webhooks/url-safety.ts';

/**
 * How an outbound call (a webhook delivery, a data source's fetch) reaches a checked target: the request
 * function for its scheme and a DNS lookup pinned to the address the SSRF check resolved and allowed, so a
 * second resolution cannot lead elsewhere (DNS rebinding); the URL's host still names the TLS server and the
 * Host header. http: is for the local stack only (deployed targets are https), and node:http is imported
 * then, not at cold start: a static import of it cost the webhook worker ~9 ms of CPU at init.
 */
export async function pinnedRequest(target: SafeTarget): Promise<{ send: typeof httpsRequest; lookup: LookupFunction }> {
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
