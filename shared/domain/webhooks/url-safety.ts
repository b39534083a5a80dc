import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { webhookSettings } from '#shared/domain/webhooks/settings.ts';

/**
 * Where a webhook may point. Deployed: https only, and every address the host resolves to must be public
 * (no private, loopback, link-local, CGNAT, metadata, multicast or reserved ranges), so a tenant cannot make
 * the service call into its own network. Checked at registration and again before every attempt (DNS can
 * change), and the attempt connects to the address that was checked (no second lookup to rebind).
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(net, prefix, 'ipv6');

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost']);

/** Whether an IP address is one a webhook must never reach. IPv4-mapped IPv6 addresses are judged as IPv4. */
export function isBlockedAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return isBlockedAddress(mapped[1]!);
  const family = isIP(address);
  if (family === 0) return true;
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export type Resolve = (host: string) => Promise<string[]>;
const dnsResolve: Resolve = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** A URL judged safe: the address to connect to (one of the checked ones). */
export interface SafeTarget {
  url: URL;
  address: string;
}

/** Why a URL is refused, as a sentence for a 422 detail or a delivery's last_error; undefined when it is fine. */
export function urlShapeProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username || url.password) return 'must not carry credentials';
  const local = webhookSettings.allowLocalHttp && LOCAL_HOSTS.has(url.hostname);
  if (url.protocol !== 'https:' && !(local && url.protocol === 'http:')) return 'must use https';
  return undefined;
}

/** Resolves the URL's host and checks every address; throws an Error whose message says why it is refused. */
export async function resolveSafeTarget(raw: string, resolve: Resolve = dnsResolve): Promise<SafeTarget> {
  const problem = urlShapeProblem(raw);
  if (problem) throw new Error(`url ${problem}`);
  const url = new URL(raw);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (webhookSettings.allowLocalHttp && LOCAL_HOSTS.has(url.hostname)) return { url, address: host === 'localhost' ? '127.0.0.1' : host };
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await resolve(host);
  } catch {
    throw new Error('url host does not resolve');
  }
  if (addresses.length === 0) throw new Error('url host does not resolve');
  if (addresses.some(isBlockedAddress)) throw new Error('url must not resolve to a private, loopback, link-local or metadata address');
  return { url, address: addresses[0]! };
}
