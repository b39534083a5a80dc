import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * The SSRF checks of an outbound request (pinned-request.ts): where a webhook (or a data source's fetch) may
 * point. Deployed: https only, and every address the host resolves to must be public (no private, loopback,
 * link-local, CGNAT, metadata, multicast or reserved ranges, nor an IPv6 form that carries one: isBlockedAddress),
 * so a tenant cannot make the service call into its own network. Checked at registration and again before every
 * attempt (DNS can change), and the attempt connects to the address that was checked (no second lookup to rebind).
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
// IPv6 is judged in isBlockedAddress: only global unicast (2000::/3) is a public destination, less these ranges
// in it; the forms that embed an IPv4 address are judged by that address or refused.
for (const [net, prefix] of [
  ['2001::', 23], // IETF protocol assignments: Teredo (2001::/32, the client's IPv4 address obfuscated inside), benchmarking, ORCHID
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: an IPv4 address inside, reached through a relay
  ['3fff::', 20], // documentation (RFC 9637)
] as const)
  blocked.addSubnet(net, prefix, 'ipv6');

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost']);
/** The local stack accepts http and loopback for 127.0.0.1 and localhost; never set in AWS. */
const allowLocalHttp = () => process.env.WEBHOOK_ALLOW_LOCAL_HTTP === 'true';

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail read as the last two), or undefined (a zone id included). */
function ipv6Groups(address: string): number[] | undefined {
  if (isIP(address) !== 6 || address.includes('%')) return undefined;
  let text = address;
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    if (isIP(tail) !== 4) return undefined;
    const [a, b, c, d] = tail.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const part = (h: string | undefined) => (h ? h.split(':') : []);
  const head = part(halves[0]);
  const rest = part(halves[1]);
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  if (groups.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
  return groups.map((g) => parseInt(g, 16));
}

const embeddedIpv4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * Whether an IP address is one a webhook or a data source must never reach (anything that is not an IP address
 * included). IPv4: the ranges above. IPv6: only global unicast (2000::/3) less the ranges above; of the forms
 * that carry an IPv4 address, IPv4-mapped (`::ffff:0:0/96`, any spelling) and NAT64 (`64:ff9b::/96`) reach that
 * address, so they are judged by it; IPv4-compatible (`::/96`, `::` and `::1` among them), IPv4-translated
 * (`::ffff:0:0:0/96`), local-use NAT64 (`64:ff9b:1::/48`), Teredo and 6to4 are refused whatever they carry.
 */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const g = ipv6Groups(address);
  if (!g) return true;
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && g[5] === 0xffff) return isBlockedAddress(embeddedIpv4(g[6]!, g[7]!)); // ::ffff:a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return isBlockedAddress(embeddedIpv4(g[6]!, g[7]!)); // 64:ff9b::a.b.c.d
  if ((g[0]! & 0xe000) !== 0x2000) return true; // not global unicast: ::/8 (with ::/96), ULA, link-local, multicast, ...
  return blocked.check(address, 'ipv6');
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
  const local = allowLocalHttp() && LOCAL_HOSTS.has(url.hostname);
  if (url.protocol !== 'https:' && !(local && url.protocol === 'http:')) return 'must use https';
  return undefined;
}

/** Resolves the URL's host and checks every address; throws an Error whose message says why it is refused. */
export async function resolveSafeTarget(raw: string, resolve: Resolve = dnsResolve): Promise<SafeTarget> {
  const problem = urlShapeProblem(raw);
  if (problem) throw new Error(`url ${problem}`);
  const url = new URL(raw);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (allowLocalHttp() && LOCAL_HOSTS.has(url.hostname)) return { url, address: host === 'localhost' ? '127.0.0.1' : host };
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
