import { describe, expect, it } from 'vitest';
import { embeddedIPv4, forbiddenReason } from './address-policy.ts';

describe('forbiddenReason', () => {
  it.each([
    ['127.0.0.1', 'loopback'], ['127.255.0.9', 'loopback'], ['10.1.2.3', 'private'], ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'], ['192.168.1.1', 'private'], ['169.254.169.254', 'link-local'], ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'], ['239.255.255.250', 'multicast'], ['100.64.0.1', 'carrier-grade'], ['255.255.255.255', 'broadcast'],
    ['::1', 'loopback'], ['::', 'unspecified'], ['fe80::1', 'link-local'], ['fe80::1%eth0', 'link-local'], ['fd12:3456::1', 'unique-local'],
    ['fc00::1', 'unique-local'], ['ff02::1', 'multicast'], ['::ffff:127.0.0.1', 'loopback'], ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'], ['::ffff:169.254.169.254', 'link-local'], ['64:ff9b::a9fe:a9fe', 'link-local'], ['::127.0.0.1', 'loopback'],
  ])('refuses %s (%s)', (address, why) => {
    expect(forbiddenReason(address)).toMatch(new RegExp(why));
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2001:4860:4860::8888'])('allows public %s', (address) => {
    expect(forbiddenReason(address)).toBeNull();
  });

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
});
