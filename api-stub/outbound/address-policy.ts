import { BlockList, isIP } from 'node:net';

/**
 * Which resolved addresses an outbound call (webhook, pipeline spawn) may reach. Pure: takes an
 * address literal, answers why it is refused or null. IPv4 embedded in IPv6 is judged by its IPv4
 * part: mapped `::ffff:a.b.c.d`, translated `::ffff:0:a.b.c.d` (SIIT), compatible `::a.b.c.d`, NAT64
 * `64:ff9b::/96`, 6to4 `2002:AABB:CCDD::/48` and Teredo `2001:0::/32` (server and client addresses;
 * the client's is stored inverted). The local-use NAT64 prefix `64:ff9b:1::/48` (RFC 8215) is never
 * public, wherever its operator puts the IPv4 part, so it is refused whole.
 */
const V4_BLOCKS: Array<[string, number, string]> = [
  ['0.0.0.0', 8, 'unspecified ("this network")'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared address space (carrier-grade NAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];
const V6_BLOCKS: Array<[string, number, string]> = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['fc00::', 7, 'unique-local'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
  ['100::', 64, 'discard-only'],
  ['64:ff9b:1::', 48, 'local-use NAT64 (RFC 8215)'],
];

const v4 = V4_BLOCKS.map(([net, prefix, why]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, 'ipv4');
  return { list, why };
});
const v6 = V6_BLOCKS.map(([net, prefix, why]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, 'ipv6');
  return { list, why };
});

/** Expands an IPv6 literal to its 8 groups (numbers), or null when it is not one. */
function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const tailV4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tailV4) {
    const parts = tailV4[1]!.split('.').map(Number);
    const hi = ((parts[0]! << 8) | parts[1]!).toString(16);
    const lo = ((parts[2]! << 8) | parts[3]!).toString(16);
    text = text.slice(0, -tailV4[1]!.length) + `${hi}:${lo}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const groups = [...head, ...Array<string>(Math.max(fill, 0)).fill('0'), ...tail].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

const v4Text = (hi: number, lo: number): string => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');

/** Every IPv4 address carried inside an IPv6 one (see the forms above); empty when none. */
export function embeddedIPv4s(address: string): string[] {
  const g = ipv6Groups(address);
  if (!g) return [];
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const mapped = zeros(0, 5) && g[5] === 0xffff;
  const translated = zeros(0, 4) && g[4] === 0xffff && g[5] === 0;
  const compatible = zeros(0, 6) && (g[6] !== 0 || g[7]! > 1);
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6);
  if (mapped || translated || compatible || nat64) return [v4Text(g[6]!, g[7]!)];
  if (g[0] === 0x2002) return [v4Text(g[1]!, g[2]!)];
  // Teredo: the server's IPv4 in groups 2-3, the client's (bits inverted) in groups 6-7.
  if (g[0] === 0x2001 && g[1] === 0) return [v4Text(g[2]!, g[3]!), v4Text(~g[6]! & 0xffff, ~g[7]! & 0xffff)];
  return [];
}

/** The first IPv4 address carried inside an IPv6 one, if any. */
export function embeddedIPv4(address: string): string | null {
  return embeddedIPv4s(address)[0] ?? null;
}

/** Why `address` must not be reached, or null when it is a public unicast address. */
export function forbiddenReason(address: string): string | null {
  const family = isIP(address.replace(/%.*$/, ''));
  if (family === 4) {
    if (address === '255.255.255.255') return 'broadcast';
    return v4.find((b) => b.list.check(address, 'ipv4'))?.why ?? null;
  }
  if (family === 6) {
    const plain = address.replace(/%.*$/, '');
    const block = v6.find((b) => b.list.check(plain, 'ipv6'));
    if (block) return block.why;
    const why = embeddedIPv4s(plain)
      .map((inner) => forbiddenReason(inner))
      .find((r) => r !== null);
    return why ? `${why} (IPv4 inside IPv6)` : null;
  }
  return 'not an IP address';
}
