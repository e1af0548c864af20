import { describe, expect, it } from 'vitest';
import { embeddedIPv4, embeddedIPv4s, forbiddenReason } from './address-policy.ts';

describe('forbiddenReason', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['100.64.0.1', 'carrier-grade'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fc00::1', 'unique-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['::127.0.0.1', 'loopback'],
  ])('refuses %s (%s)', (address, why) => {
    expect(forbiddenReason(address)).toMatch(new RegExp(why));
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2001:4860:4860::8888'])(
    'allows public %s',
    (address) => {
      expect(forbiddenReason(address)).toBeNull();
    },
  );

  it('refuses what is not an address at all', () => {
    expect(forbiddenReason('example.com')).toBe('not an IP address');
  });

  it('extracts IPv4 from mapped, compatible and NAT64 forms only', () => {
    expect(embeddedIPv4('::ffff:1.2.3.4')).toBe('1.2.3.4');
    expect(embeddedIPv4('::ffff:0102:0304')).toBe('1.2.3.4');
    expect(embeddedIPv4('64:ff9b::102:304')).toBe('1.2.3.4');
    expect(embeddedIPv4('2001:db8::1')).toBeNull();
    expect(embeddedIPv4('::1')).toBeNull();
  });

  // Issue 9: IPv6 forms that carry a private IPv4 address.
  it.each([
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['::ffff:0:10.0.0.1', 'private'],
    ['::ffff:0:a9fe:a9fe', 'link-local'],
    ['64:ff9b:1::a00:1', 'local-use NAT64'],
    ['64:ff9b:1:ffff::8.8.8.8', 'local-use NAT64'],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:a00:1::', 'private'],
    ['2002:c0a8:101:1::1', 'private'],
    ['2002:a9fe:a9fe::1', 'link-local'],
    // Teredo: server 10.0.0.1; or a public server with client 192.168.1.1 (stored inverted: 3f57:fefe).
    ['2001:0:a00:1::1', 'private'],
    ['2001:0:808:808:0:0:3f57:fefe', 'private'],
    ['2001::7f00:1:0:0:ffff:fffe', 'loopback'],
  ])('refuses %s (%s)', (address, why) => {
    expect(forbiddenReason(address)).toMatch(new RegExp(why));
  });

  it.each(['2002:808:808::1', '2001:0:808:808:0:0:f7f7:f7f7', '64:ff9b::808:808', '::ffff:0:8.8.8.8'])(
    'allows %s, whose embedded IPv4 is public',
    (address) => {
      expect(forbiddenReason(address)).toBeNull();
    },
  );

  it("extracts both Teredo addresses, the client's un-inverted", () => {
    expect(embeddedIPv4s('2001:0:808:808:0:0:3f57:fefe')).toEqual(['8.8.8.8', '192.168.1.1']);
    expect(embeddedIPv4s('2002:c0a8:101::')).toEqual(['192.168.1.1']);
    expect(embeddedIPv4s('::ffff:0:1.2.3.4')).toEqual(['1.2.3.4']);
    expect(embeddedIPv4s('2001:4860:4860::8888')).toEqual([]);
  });
});
