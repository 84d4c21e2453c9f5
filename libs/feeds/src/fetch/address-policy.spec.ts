import { AddressPolicy, parseCidr, specialRangeOf } from './address-policy';

describe('specialRangeOf', () => {
  it.each([
    ['0.0.0.0', 'unspecified ("this network")', '0.0.0.0/8'],
    ['10.1.2.3', 'private', '10.0.0.0/8'],
    ['100.64.0.1', 'shared (carrier-grade NAT)', '100.64.0.0/10'],
    ['100.127.255.255', 'shared (carrier-grade NAT)', '100.64.0.0/10'],
    ['127.0.0.1', 'loopback', '127.0.0.0/8'],
    ['127.255.0.9', 'loopback', '127.0.0.0/8'],
    ['169.254.169.254', 'link-local', '169.254.0.0/16'],
    ['172.16.0.1', 'private', '172.16.0.0/12'],
    ['172.31.255.255', 'private', '172.16.0.0/12'],
    ['192.0.0.8', 'IETF protocol assignment', '192.0.0.0/24'],
    ['192.0.2.1', 'documentation', '192.0.2.0/24'],
    ['192.168.1.1', 'private', '192.168.0.0/16'],
    ['198.18.0.1', 'benchmarking', '198.18.0.0/15'],
    ['224.0.0.1', 'multicast', '224.0.0.0/4'],
    ['239.255.255.250', 'multicast', '224.0.0.0/4'],
    ['240.0.0.1', 'reserved', '240.0.0.0/4'],
    ['255.255.255.255', 'broadcast', '255.255.255.255/32'],
  ])('IPv4 %s: %s', (address, kind, cidr) => {
    expect(specialRangeOf(address)).toEqual({ kind, cidr });
  });

  it.each([
    ['::', 'unspecified', '::/128'],
    ['::1', 'loopback', '::1/128'],
    ['0:0:0:0:0:0:0:1', 'loopback', '::1/128'],
    ['fc00::1', 'unique-local', 'fc00::/7'],
    ['fd12:3456::1', 'unique-local', 'fc00::/7'],
    ['fe80::1', 'link-local', 'fe80::/10'],
    ['fe80::1%eth0', 'link-local', 'fe80::/10'],
    ['fec0::1', 'site-local (deprecated)', 'fec0::/10'],
    ['ff02::1', 'multicast', 'ff00::/8'],
    ['2001:db8::1', 'documentation', '2001:db8::/32'],
    ['2001::1', 'IETF protocol assignment', '2001::/23'],
    ['2002:7f00:1::1', '6to4 (deprecated)', '2002::/16'],
    ['::7f00:1', 'reserved', 'outside 2000::/3'],
    ['4000::1', 'reserved', 'outside 2000::/3'],
  ])('IPv6 %s: %s', (address, kind, cidr) => {
    expect(specialRangeOf(address)).toEqual({ kind, cidr });
  });

  it.each([
    ['::ffff:127.0.0.1', 'IPv4-mapped', 'loopback', '127.0.0.0/8'],
    ['::ffff:7f00:1', 'IPv4-mapped', 'loopback', '127.0.0.0/8'],
    ['::FFFF:a00:1', 'IPv4-mapped', 'private', '10.0.0.0/8'],
    ['::ffff:0:0', 'IPv4-mapped', 'unspecified ("this network")', '0.0.0.0/8'],
    ['64:ff9b::a9fe:a9fe', 'NAT64', 'link-local', '169.254.0.0/16'],
    ['64:ff9b::192.168.0.1', 'NAT64', 'private', '192.168.0.0/16'],
  ])('IPv6 %s, which carries an IPv4 address: %s %s', (address, via, kind, cidr) => {
    expect(specialRangeOf(address)).toEqual({ kind, cidr, via });
  });

  it.each([
    '1.1.1.1',
    '8.8.8.8',
    '100.63.255.255',
    '100.128.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '169.253.255.255',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
  ])('public %s: none', (address) => {
    expect(specialRangeOf(address)).toBeUndefined();
  });

  it('throws for text that is not an address', () => {
    expect(() => specialRangeOf('localhost')).toThrow('"localhost" is not an IP address');
  });
});

describe('parseCidr', () => {
  it.each([
    ['127.0.0.2/32', { network: '127.0.0.2', prefix: 32, family: 'ipv4' }],
    ['10.0.0.0/8', { network: '10.0.0.0', prefix: 8, family: 'ipv4' }],
    ['fd00::/8', { network: 'fd00::', prefix: 8, family: 'ipv6' }],
    ['192.168.1.10', { network: '192.168.1.10', prefix: 32, family: 'ipv4' }],
    ['::1', { network: '::1', prefix: 128, family: 'ipv6' }],
  ])('%s', (text, cidr) => {
    expect(parseCidr(text)).toEqual(cidr);
  });

  it.each([
    '',
    'localhost',
    '10.0.0.0/33',
    '::/129',
    '10.0.0.0/',
    '10.0.0.0/8/8',
    '10.0.0.0/-1',
    'fe80::/10%eth0',
  ])('%j is refused', (text) => {
    expect(() => parseCidr(text)).toThrow('is not an address range in CIDR notation');
  });
});

describe('AddressPolicy', () => {
  const none = new AddressPolicy({ allowPrivate: false, allowedRanges: [] });

  it('refuses a special-purpose address, saying which range it is in', () => {
    expect(none.refusalOf('10.0.0.5')).toBe(
      'in a special-purpose range (private, 10.0.0.0/8) that is not allowed',
    );
    expect(none.refusalOf('::ffff:127.0.0.1')).toBe(
      'in a special-purpose range (IPv4-mapped loopback, 127.0.0.0/8) that is not allowed',
    );
  });

  it('allows a public address', () => {
    expect(none.refusalOf('93.184.215.14')).toBeUndefined();
    expect(none.refusalOf('2606:2800:21f:cb07:6820:80da:af6b:8b2c')).toBeUndefined();
  });

  it('allowedRanges allows those ranges and nothing more', () => {
    const policy = new AddressPolicy({ allowPrivate: false, allowedRanges: ['127.0.0.2/32', 'fd00::/8'] });
    expect(policy.refusalOf('127.0.0.2')).toBeUndefined();
    expect(policy.refusalOf('::ffff:127.0.0.2')).toBeUndefined();
    expect(policy.refusalOf('fd00::1234')).toBeUndefined();
    expect(policy.refusalOf('127.0.0.1')).toContain('loopback');
    expect(policy.refusalOf('::ffff:127.0.0.1')).toContain('loopback');
    expect(policy.refusalOf('fc00::1')).toContain('unique-local');
    expect(policy.refusalOf('::1')).toContain('loopback');
  });

  it('allowedRanges applies to the IPv4 address a NAT64 address carries', () => {
    const policy = new AddressPolicy({ allowPrivate: false, allowedRanges: ['10.0.0.0/8'] });
    expect(policy.refusalOf('64:ff9b::a00:1')).toBeUndefined();
    expect(policy.refusalOf('64:ff9b::c0a8:1')).toContain('NAT64 private');
  });

  it('allowPrivate allows every special-purpose range', () => {
    const policy = new AddressPolicy({ allowPrivate: true, allowedRanges: [] });
    for (const address of ['127.0.0.1', '10.0.0.1', '169.254.169.254', '::1', 'fe80::1', 'fd00::1']) {
      expect(policy.refusalOf(address)).toBeUndefined();
    }
  });

  it('throws for an allowed range that is not CIDR notation', () => {
    expect(() => new AddressPolicy({ allowPrivate: false, allowedRanges: ['127.0.0.1/40'] })).toThrow(
      '"127.0.0.1/40" is not an address range in CIDR notation',
    );
  });
});
