import { BlockList, isIP } from 'node:net';

/** A special-purpose range an address falls in, named for an operator reading a refusal. */
export interface SpecialRange {
  /** What the range is for ("loopback", "private", "link-local"...). */
  readonly kind: string;
  /** The range in CIDR notation, e.g. `127.0.0.0/8`. */
  readonly cidr: string;
  /** How an IPv6 address carries the IPv4 address it was classified by, when it does. */
  readonly via?: 'IPv4-mapped' | 'NAT64';
}

interface Range {
  readonly kind: string;
  readonly cidr: string;
  readonly list: BlockList;
}

/** An address range parsed from CIDR notation; a bare address is a range of one. */
interface Cidr {
  readonly network: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
}

/** Parses `a.b.c.d/n`, `x:y::z/n` or a bare address; throws when the text is neither. */
export function parseCidr(text: string): Cidr {
  const [network = '', bits, extra] = text.trim().split('/');
  const version = isIP(network);
  const family = version === 4 ? 'ipv4' : 'ipv6';
  const width = version === 4 ? 32 : 128;
  const prefix = bits === undefined ? width : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
  if (version === 0 || network.includes('%') || extra !== undefined || !(prefix >= 0 && prefix <= width)) {
    throw new Error(`"${text}" is not an address range in CIDR notation (such as 127.0.0.2/32 or fd00::/8)`);
  }
  return { network, prefix, family };
}

function rangeOf(cidr: string, kind: string): Range {
  const { network, prefix, family } = parseCidr(cidr);
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { kind, cidr, list };
}

// IANA's IPv4 and IPv6 special-purpose address registries: every range whose addresses are not
// reachable on the public internet, plus multicast. First match names the address; order matters
// only where one range holds another (broadcast inside 240.0.0.0/4).
const IPV4_RANGES: readonly Range[] = [
  rangeOf('0.0.0.0/8', 'unspecified ("this network")'),
  rangeOf('10.0.0.0/8', 'private'),
  rangeOf('100.64.0.0/10', 'shared (carrier-grade NAT)'),
  rangeOf('127.0.0.0/8', 'loopback'),
  rangeOf('169.254.0.0/16', 'link-local'),
  rangeOf('172.16.0.0/12', 'private'),
  rangeOf('192.0.0.0/24', 'IETF protocol assignment'),
  rangeOf('192.0.2.0/24', 'documentation'),
  rangeOf('192.88.99.0/24', '6to4 relay (deprecated)'),
  rangeOf('192.168.0.0/16', 'private'),
  rangeOf('198.18.0.0/15', 'benchmarking'),
  rangeOf('198.51.100.0/24', 'documentation'),
  rangeOf('203.0.113.0/24', 'documentation'),
  rangeOf('224.0.0.0/4', 'multicast'),
  rangeOf('255.255.255.255/32', 'broadcast'),
  rangeOf('240.0.0.0/4', 'reserved'),
];

// Inside the global unicast block 2000::/3 only these are special; everything outside it is
// reserved, unless IPV6_WITH_IPV4 or a named range below says more.
const IPV6_RANGES: readonly Range[] = [
  rangeOf('::/128', 'unspecified'),
  rangeOf('::1/128', 'loopback'),
  rangeOf('fc00::/7', 'unique-local'),
  rangeOf('fe80::/10', 'link-local'),
  rangeOf('fec0::/10', 'site-local (deprecated)'),
  rangeOf('ff00::/8', 'multicast'),
  rangeOf('100::/64', 'discard-only'),
  rangeOf('2001::/23', 'IETF protocol assignment'),
  rangeOf('2001:db8::/32', 'documentation'),
  rangeOf('2002::/16', '6to4 (deprecated)'),
  rangeOf('3fff::/20', 'documentation'),
];
const GLOBAL_UNICAST = rangeOf('2000::/3', 'global unicast');
const OUTSIDE_GLOBAL_UNICAST = { kind: 'reserved', cidr: 'outside 2000::/3' };

/** IPv6 ranges whose last 32 bits are an IPv4 address, which then decides. */
const IPV6_WITH_IPV4 = [
  { via: 'IPv4-mapped', range: rangeOf('::ffff:0:0/96', 'IPv4-mapped') },
  { via: 'NAT64', range: rangeOf('64:ff9b::/96', 'NAT64') },
] as const;

/** The special-purpose range an IP address is in, or undefined for a public unicast address. */
export function specialRangeOf(address: string): SpecialRange | undefined {
  const bare = withoutZone(address);
  const version = isIP(bare);
  if (version === 4) return firstMatch(IPV4_RANGES, bare, 'ipv4');
  if (version !== 6) throw new Error(`"${address}" is not an IP address`);
  for (const { via, range } of IPV6_WITH_IPV4) {
    if (!range.list.check(bare, 'ipv6')) continue;
    const inner = firstMatch(IPV4_RANGES, embeddedIpv4(bare), 'ipv4');
    return inner && { ...inner, via };
  }
  const named = firstMatch(IPV6_RANGES, bare, 'ipv6');
  if (named) return named;
  return GLOBAL_UNICAST.list.check(bare, 'ipv6') ? undefined : OUTSIDE_GLOBAL_UNICAST;
}

function firstMatch(ranges: readonly Range[], address: string, family: 'ipv4' | 'ipv6') {
  const range = ranges.find(({ list }) => list.check(address, family));
  return range && { kind: range.kind, cidr: range.cidr };
}

const withoutZone = (address: string): string => address.replace(/%.*$/, '');

/** The IPv4 address in an IPv6 address's last 32 bits, given as dotted quad or as two groups. */
function embeddedIpv4(address: string): string {
  const tail = address.slice(address.lastIndexOf(':') + 1);
  if (tail.includes('.')) return tail;
  // The last two groups; `::` at the end, or just before the last group, stands for zeros.
  const groups = address.split(':').slice(-2);
  const [high = 0, low = 0] = groups.map((group) => (group === '' ? 0 : parseInt(group, 16)));
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** Which addresses a fetch may connect to. */
export interface AddressPolicyOptions {
  /** Allows every special-purpose range (a home network's feeds). */
  readonly allowPrivate: boolean;
  /** Special-purpose ranges allowed all the same, in CIDR notation. */
  readonly allowedRanges: readonly string[];
}

/** Refuses addresses in special-purpose ranges unless the options allow them. */
export class AddressPolicy {
  private readonly allowed = new BlockList();

  /** Throws when a range in `allowedRanges` is not CIDR notation. */
  constructor(private readonly options: AddressPolicyOptions) {
    for (const text of options.allowedRanges) {
      const { network, prefix, family } = parseCidr(text);
      this.allowed.addSubnet(network, prefix, family);
    }
  }

  /**
   * Why a connection to the address is refused, as a clause that follows the address ("in a
   * special-purpose range (loopback, 127.0.0.0/8) that is not allowed"); undefined when it is allowed.
   */
  refusalOf(address: string): string | undefined {
    if (this.options.allowPrivate) return undefined;
    const special = specialRangeOf(address);
    if (!special || this.isAllowed(withoutZone(address))) return undefined;
    const via = special.via ? `${special.via} ` : '';
    return `in a special-purpose range (${via}${special.kind}, ${special.cidr}) that is not allowed`;
  }

  private isAllowed(address: string): boolean {
    if (isIP(address) === 4) return this.allowed.check(address, 'ipv4');
    // BlockList matches an IPv4-mapped address against IPv4 ranges itself; NAT64 needs the IPv4 part.
    if (this.allowed.check(address, 'ipv6')) return true;
    const nat64 = IPV6_WITH_IPV4[1].range.list.check(address, 'ipv6');
    return nat64 && this.allowed.check(embeddedIpv4(address), 'ipv4');
  }
}
