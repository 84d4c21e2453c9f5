import { VerifiedCredentials } from './verified-credentials';

describe('VerifiedCredentials', () => {
  const t0 = Date.parse('2026-12-07T10:00:00Z');
  const alice = '6f1f4f0e-0000-4000-8000-000000000001';
  const bob = '6f1f4f0e-0000-4000-8000-000000000002';

  it('answers a remembered pair until its lifetime ends, then forgets it', () => {
    const credentials = new VerifiedCredentials(60_000);
    expect(credentials.userId('alice', 'pw', t0)).toBeUndefined();
    credentials.remember('alice', 'pw', alice, t0);
    expect(credentials.userId('alice', 'pw', t0 + 59_999)).toBe(alice);
    expect(credentials.userId('alice', 'pw', t0 + 60_000)).toBeUndefined();
    expect(credentials.size).toBe(0);
  });

  it('answers only the exact pair: another password, name or split is not remembered', () => {
    const credentials = new VerifiedCredentials(60_000);
    credentials.remember('alice', 'pw:x', alice, t0);
    expect(credentials.userId('alice', 'pw:x', t0)).toBe(alice);
    for (const [name, password] of [
      ['alice', 'pw'],
      ['alice', 'pw:x '],
      ['Alice', 'pw:x'],
      ['alice:pw', 'x'],
    ] as const)
      expect(credentials.userId(name, password, t0)).toBeUndefined();
  });

  it('keeps no password, only keyed digests that differ between processes', () => {
    const one = new VerifiedCredentials(60_000);
    const other = new VerifiedCredentials(60_000);
    one.remember('alice', 'secret-password', alice, t0);
    other.remember('alice', 'secret-password', alice, t0);
    const keys = (credentials: VerifiedCredentials) => [
      // The ExpiringMap's own map, keyed by what the process keeps of each pair.
      ...(credentials as unknown as { entries: { entries: Map<string, unknown> } }).entries.entries.keys(),
    ];
    expect(JSON.stringify(keys(one))).not.toContain('secret-password');
    expect(keys(one)).not.toEqual(keys(other));
  });

  it("forgets a user's pairs at once, and only that user's", () => {
    const credentials = new VerifiedCredentials(60_000);
    credentials.remember('alice', 'pw', alice, t0);
    credentials.remember('alice', 'old', alice, t0);
    credentials.remember('bob', 'pw', bob, t0);
    credentials.forgetUser(alice);
    expect(credentials.userId('alice', 'pw', t0)).toBeUndefined();
    expect(credentials.userId('alice', 'old', t0)).toBeUndefined();
    expect(credentials.userId('bob', 'pw', t0)).toBe(bob);
    credentials.forgetAll();
    expect(credentials.userId('bob', 'pw', t0)).toBeUndefined();
  });

  it('remembers nothing with a lifetime of 0', () => {
    const credentials = new VerifiedCredentials(0);
    credentials.remember('alice', 'pw', alice, t0);
    expect(credentials.userId('alice', 'pw', t0)).toBeUndefined();
  });

  it('renews the lifetime of a pair checked again', () => {
    const credentials = new VerifiedCredentials(60_000);
    credentials.remember('alice', 'pw', alice, t0);
    credentials.remember('alice', 'pw', alice, t0 + 30_000);
    expect(credentials.userId('alice', 'pw', t0 + 80_000)).toBe(alice);
  });
});
