import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isBlockedAddress, resolveSafeTarget } from '#shared/outbound/url-safety.ts';

/*
 * The IPv6 forms that carry (or stand for) an IPv4 address, and the tunnels (issue 32, item 6). Nothing here
 * connects anywhere: the addresses are judged as text, and a URL's host is "resolved" by a fake that records
 * what it was asked.
 */

const REFUSED = [
  // ::/96, IPv4-compatible (deprecated): refused whatever it carries, public or not
  '::',
  '::1',
  '::127.0.0.1',
  '::7f00:1',
  '::10.0.0.1',
  '::8.8.8.8',
  '::808:808',
  '0:0:0:0:0:0:a9fe:a9fe',
  // ::ffff:0:0/96, IPv4-mapped: judged by the IPv4 address inside, in every spelling
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '0:0:0:0:0:ffff:7f00:1',
  '0000:0000:0000:0000:0000:FFFF:7F00:0001',
  '::ffff:10.0.0.1',
  '::ffff:a00:1',
  '::ffff:169.254.169.254',
  '::ffff:a9fe:a9fe',
  '::ffff:100.64.0.1',
  '::ffff:0.0.0.0',
  '::ffff:224.0.0.1',
  // ::ffff:0:0:0/96, IPv4-translated: refused
  '::ffff:0:8.8.8.8',
  '::ffff:0:808:808',
  // 64:ff9b::/96, NAT64: judged by the IPv4 address inside
  '64:ff9b::127.0.0.1',
  '64:ff9b::7f00:1',
  '64:ff9b::10.0.0.1',
  '64:ff9b::a9fe:a9fe',
  '64:ff9b::192.168.1.1',
  '64:ff9b:0:0:0:0:ac10:1',
  // local-use NAT64 and the rest of ::/8: refused
  '64:ff9b:1::a00:1',
  '64:ff9b:1::808:808',
  '100::1',
  // 2001::/32, Teredo (the client's IPv4 address obfuscated inside): refused; so is the rest of 2001::/23
  '2001::1',
  '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  '2001:0:53aa:64c:0:0:0:1',
  '2001:2::1',
  '2001:10::1',
  '2001:db8::1',
  // 6to4, documentation, and everything outside global unicast
  '2002:7f00:1::1',
  '2002:c0a8:101::1',
  '3fff::1',
  'fc00::1',
  'fd00:ec2::254',
  'fe80::1',
  'fe80::1%eth0',
  'fec0::1',
  'ff02::1',
  '4000::1',
  '5f00::1',
  'not-an-ip',
  '',
];

const ALLOWED = [
  '8.8.8.8',
  '93.184.216.34',
  '::ffff:8.8.8.8',
  '::ffff:808:808',
  '64:ff9b::8.8.8.8',
  '64:ff9b::5db8:d822',
  '2606:4700:4700::1111',
  '2a00:1450:4001:82a::200e',
  '2001:4860:4860::8888',
];

describe('URL safety: IPv6 forms that embed IPv4, and tunnels', () => {
  it('refuses IPv4-compatible, translated, Teredo, 6to4 and non-global IPv6; judges mapped and NAT64 addresses by their IPv4 address', () => {
    expect(REFUSED.filter((a) => !isBlockedAddress(a))).toEqual([]);
    expect(ALLOWED.filter((a) => isBlockedAddress(a))).toEqual([]);
  });

  describe('deployed (https, public addresses only)', () => {
    let saved: string | undefined;
    beforeEach(() => {
      saved = process.env.WEBHOOK_ALLOW_LOCAL_HTTP;
      delete process.env.WEBHOOK_ALLOW_LOCAL_HTTP;
    });
    afterEach(() => {
      if (saved !== undefined) process.env.WEBHOOK_ALLOW_LOCAL_HTTP = saved;
    });

    it('refuses an address literal in the URL in any spelling the URL parser accepts, without a lookup', async () => {
      const asked: string[] = [];
      const resolve = async (host: string) => (asked.push(host), ['8.8.8.8']);
      for (const host of [
        '[::127.0.0.1]',
        '[::ffff:127.0.0.1]',
        '[::ffff:7f00:1]',
        '[0:0:0:0:0:ffff:a9fe:a9fe]',
        '[::ffff:0:a00:1]',
        '[64:ff9b::169.254.169.254]',
        '[64:ff9b::a00:1]',
        '[2001:0:4136:e378:8000:63bf:3fff:fdd2]',
        '[2001::a9fe:a9fe]',
      ])
        await expect(resolveSafeTarget(`https://${host}/x`, resolve), host).rejects.toThrow(/private, loopback, link-local or metadata/);
      expect(asked).toEqual([]);
    });

    it('refuses a host that resolves to one of them (one such address among public ones is enough)', async () => {
      for (const address of ['::ffff:a9fe:a9fe', '::a00:1', '64:ff9b::a00:1', '2001::1', '::ffff:0:7f00:1']) {
        const asked: string[] = [];
        const resolve = async (host: string) => (asked.push(host), ['2606:4700:4700::1111', address]);
        await expect(resolveSafeTarget('https://hooks.example.test/x', resolve), address).rejects.toThrow(/private/);
        expect(asked).toEqual(['hooks.example.test']);
      }
      // a public IPv4 address behind NAT64 or mapped is a public address
      await expect(resolveSafeTarget('https://hooks.example.test/x', async () => ['64:ff9b::808:808'])).resolves.toMatchObject({
        address: '64:ff9b::808:808',
      });
    });
  });
});
