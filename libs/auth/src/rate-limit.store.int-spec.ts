import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { openAuthTestDatabase } from '../../../test/support/databases';
import { RateLimitStore } from './rate-limit.store';

const MINUTE = 60_000;

/** Two API replicas: two pools on one database. */
let replicaA: DataSource;
let replicaB: DataSource;

/** A key no other test uses: tests share one database and never truncate it. */
const freshKey = (prefix = 'key') => `${prefix}:${randomBytes(4).toString('hex')}`;

async function storedKeys(keys: string[]): Promise<string[]> {
  const rows: { key: string }[] = await replicaA.query(
    `SELECT key FROM castlog_auth.rate_limit_buckets WHERE key = ANY($1) ORDER BY key`,
    [keys],
  );
  return rows.map((row) => row.key);
}

beforeAll(async () => {
  replicaA = await openAuthTestDatabase('castlog_rate_limits');
  replicaB = await new DataSource({
    type: 'postgres',
    url: (replicaA.options as { url: string }).url,
  }).initialize();
});

afterAll(async () => {
  await replicaB?.destroy();
  await replicaA?.destroy();
});

describe('RateLimitStore', () => {
  it('allows the limit at once, then answers the seconds until the next request', async () => {
    const limits = new RateLimitStore(replicaA, 3);
    const a = freshKey();
    for (let i = 0; i < 3; i += 1) expect(await limits.take(a, 1000)).toBe(0);
    expect(await limits.take(a, 1000)).toBe(20);
    expect(await limits.take(a, 1000 + 19_000)).toBe(1);
    expect(await limits.take(a, 1000 + 20_000)).toBe(0);
    expect(await limits.take(a, 1000 + 20_000)).toBe(20);
  });

  it('keeps one bucket per key', async () => {
    const limits = new RateLimitStore(replicaA, 1);
    const [a, b] = [freshKey(), freshKey()];
    expect(await limits.take(a, 0)).toBe(0);
    expect(await limits.take(a, 0)).toBe(60);
    expect(await limits.take(b, 0)).toBe(0);
  });

  it('refills up to the limit, never beyond', async () => {
    const limits = new RateLimitStore(replicaA, 2);
    const a = freshKey();
    expect(await limits.take(a, 0)).toBe(0);
    const later = 10 * MINUTE;
    expect([await limits.take(a, later), await limits.take(a, later), await limits.take(a, later)]).toEqual([
      0, 0, 30,
    ]);
  });

  it('peeks without taking', async () => {
    const limits = new RateLimitStore(replicaA, 2);
    const a = freshKey();
    expect(await limits.peek(a, 0)).toBe(0);
    expect(await storedKeys([a])).toEqual([]);
    expect(await limits.take(a, 0)).toBe(0);
    expect(await limits.peek(a, 0)).toBe(0);
    expect(await limits.take(a, 0)).toBe(0);
    expect(await limits.peek(a, 0)).toBe(30);
    expect(await limits.peek(a, 0)).toBe(30);
    expect(await limits.peek(a, 30_000)).toBe(0);
    expect(await limits.take(a, 30_000)).toBe(0);
  });

  it('is disabled by 0, without a statement', async () => {
    const unreachable = new DataSource({ type: 'postgres', url: 'postgres://nobody@127.0.0.1:1/none' });
    const disabled = new RateLimitStore(unreachable, 0);
    const a = freshKey();
    for (let i = 0; i < 1000; i += 1) expect(await disabled.take(a, 0)).toBe(0);
    expect(await disabled.peek(a, 0)).toBe(0);
    expect(await new RateLimitStore(replicaA, 0).take(a, 0)).toBe(0);
    expect(await storedKeys([a])).toEqual([]);
  });

  it('lets database errors through instead of answering', async () => {
    const unreachable = new DataSource({ type: 'postgres', url: 'postgres://nobody@127.0.0.1:1/none' });
    const limits = new RateLimitStore(unreachable, 10);
    await expect(limits.take(freshKey(), 0)).rejects.toThrow();
    await expect(limits.peek(freshKey(), 0)).rejects.toThrow();
  });

  it('forgets buckets that have refilled, at most once a minute', async () => {
    const limits = new RateLimitStore(replicaA, 60);
    const [a, b, c, d] = [freshKey('a'), freshKey('b'), freshKey('c'), freshKey('d')];
    await limits.take(a, MINUTE);
    await limits.take(b, MINUTE);
    expect(await storedKeys([a, b])).toEqual([a, b]);
    // Refilled after a second, but the last sweep was less than a minute ago.
    await limits.take(c, 2 * MINUTE - 1);
    expect(await storedKeys([a, b, c])).toEqual([a, b, c]);
    await limits.take(d, 2 * MINUTE + 5_000);
    expect(await storedKeys([a, b, c, d])).toEqual([d]);
  });

  it('never refills for time before the last update (a replica whose clock is behind)', async () => {
    const ahead = new RateLimitStore(replicaA, 1);
    const behind = new RateLimitStore(replicaB, 1);
    const a = freshKey();
    expect(await ahead.take(a, 2 * MINUTE)).toBe(0);
    expect(await behind.take(a, MINUTE)).toBe(60);
    expect(await behind.peek(a, MINUTE)).toBe(60);
    expect(await behind.take(a, 2 * MINUTE + 30_000)).toBe(30);
    expect(await ahead.take(a, 3 * MINUTE)).toBe(0);
  });
});

describe('RateLimitStore across replicas', () => {
  it('shares one bucket between two processes', async () => {
    const onA = new RateLimitStore(replicaA, 2);
    const onB = new RateLimitStore(replicaB, 2);
    const a = freshKey();
    expect(await onA.take(a, 0)).toBe(0);
    expect(await onB.take(a, 0)).toBe(0);
    expect(await onA.take(a, 0)).toBe(30);
    expect(await onB.take(a, 0)).toBe(30);
    expect(await onB.peek(a, 15_000)).toBe(15);
    expect(await onA.take(a, 30_000)).toBe(0);
    expect(await onB.take(a, 30_000)).toBe(30);
  });

  it('allows exactly the capacity to 50 concurrent takes from two processes', async () => {
    const [onA, onB] = [new RateLimitStore(replicaA, 10), new RateLimitStore(replicaB, 10)];
    const a = freshKey();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? onA : onB).take(a, 5 * MINUTE)),
    );
    expect(answers.filter((seconds) => seconds === 0)).toHaveLength(10);
    expect(answers.filter((seconds) => seconds === 6)).toHaveLength(40);
  });
});
