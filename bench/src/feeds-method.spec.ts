import { parseFeed } from '@castlog/feeds';
import { alternateConditions, batchSize, busyIdleVerdict, conditionOrder } from './busy-idle';
import { EPISODES, feedUrlOf, hostsFor, renderFeed, setOf, sharedFeedUrl } from './feed-fixture';
import { evaluateTargets } from './targets';

describe('the feeds scenario', () => {
  it('serves realistic feeds of a few KB that castlog reads whole, each with a title of its own', () => {
    const body = renderFeed('/a/42.xml');
    expect(body.length).toBeGreaterThan(3_000);
    expect(body.length).toBeLessThan(8_000);
    expect(body).toBe(renderFeed('/a/42.xml'));
    const info = parseFeed(Buffer.from(body), 'application/rss+xml; charset=utf-8');
    expect(info.title).toMatch(/\(a\/42\)$/);
    expect(info.author).toMatch(/^\w+ \w+$/);
    expect(info.imageUrl).toMatch(/^https:\/\/media\.example\.net\/.+cover-3000x3000\.jpg$/);
    expect(info.podcastGuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-9[0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(info.language).toBe('en-us');
    expect(info.episodeCount).toBe(EPISODES);
    expect(info.newestEpisodeAt?.getUTCFullYear()).toBe(2026);
    expect(info.newFeedUrl).toBeUndefined();
    const titles = new Set(
      Array.from({ length: 2_000 }, (_, i) => parseFeed(Buffer.from(renderFeed(`/a/${i}.xml`))).title),
    );
    expect(titles.size).toBe(2_000);
  });

  it('spreads feeds over the ports in turn, a port for each 100 feeds and at least 8', () => {
    expect(hostsFor(10_000)).toBe(100);
    expect(hostsFor(1_000)).toBe(10);
    expect(hostsFor(200)).toBe(8);
    const origins = ['http://127.0.0.1:1', 'http://127.0.0.1:2', 'http://127.0.0.1:3'];
    expect([0, 1, 2, 3].map((i) => feedUrlOf(origins, 'a', i))).toEqual([
      'http://127.0.0.1:1/a/0.xml',
      'http://127.0.0.1:2/a/1.xml',
      'http://127.0.0.1:3/a/2.xml',
      'http://127.0.0.1:1/a/3.xml',
    ]);
    expect(setOf('/b3/17.xml')).toBe('b3');
    expect(setOf('/w/idle1/r5/i0.xml')).toBe('w');
    expect(setOf('/feed.xml')).toBe('other');
    expect(sharedFeedUrl(['http://h:1/w/x', 'http://h:2/w/x'], 3, 0)).toBe('http://h:2/w/x/r3/i0.xml');
  });

  it('measures baseline, idle and busy in each round, reversing the order every other round', async () => {
    expect(conditionOrder(1)).toEqual(['baseline', 'idle', 'busy']);
    expect(conditionOrder(2)).toEqual(['busy', 'idle', 'baseline']);
    const calls: string[] = [];
    const rounds = await alternateConditions(2, async (condition, n) => {
      calls.push(`${n}${condition}`);
      return `${condition}${n}`;
    });
    expect(calls).toEqual(['1baseline', '1idle', '1busy', '2busy', '2idle', '2baseline']);
    expect(rounds[1]).toMatchObject({ round: 2, baseline: 'baseline2', idle: 'idle2', busy: 'busy2' });
  });

  it("holds the drop of the median ratio from idle to busy against the idle rounds' spread", () => {
    const within = busyIdleVerdict([
      { idle: 0.7, busy: 0.66 },
      { idle: 0.62, busy: 0.6 },
      { idle: 0.68, busy: 0.61 },
    ]);
    expect(within).toMatchObject({ drop: 0.07, noise: 0.08, met: true });
    expect(within.paired_drop).toEqual({ median: 0.04, min: 0.02, max: 0.07 });
    const beyond = busyIdleVerdict([
      { idle: 0.7, busy: 0.5 },
      { idle: 0.68, busy: 0.55 },
    ]);
    expect(beyond).toMatchObject({ drop: 0.165, noise: 0.02, met: false });
    expect(busyIdleVerdict([{ idle: 0.7, busy: 0.7 }]).met).toBe(true);
    expect(busyIdleVerdict([{ idle: 0.7, busy: 0.69 }]).met).toBe(false);
  });

  it('sizes a busy batch to outlast its round at the rate measured alone', () => {
    expect(batchSize(150, 11)).toBe(3_300);
    expect(batchSize(5, 11)).toBe(200);
    expect(batchSize(Number.NaN, 11)).toBe(200);
  });

  it('states its two targets: the time for 10,000 feeds, and the drop against the run’s own spread', () => {
    const byId = (result: Record<string, unknown>) =>
      Object.fromEntries(evaluateTargets(result).map((target) => [target.id, target]));
    const met = byId({
      feeds: {
        settings: { feeds: 10_000, concurrency: 64 },
        resolve_seconds: 212.4,
        write_ratio_drop: 0.03,
        write_ratio_noise: 0.09,
        write: { paired_drop: { median: 0.02, min: -0.04, max: 0.11 } },
      },
    });
    expect(met['feeds.resolve.seconds']).toMatchObject({ status: 'met', figure: 212.4, unit: 's' });
    expect(met['feeds.write_ratio']).toMatchObject({
      status: 'met',
      figure: 0.03,
      every_round_met: false,
      note: "the idle rounds' spread: 0.09",
    });
    const missed = byId({
      feeds: {
        settings: { feeds: 10_000, concurrency: 64 },
        resolve_seconds: 640,
        write_ratio_drop: 0.12,
        write_ratio_noise: 0.09,
      },
    });
    expect(missed['feeds.resolve.seconds']?.status).toBe('missed');
    expect(missed['feeds.write_ratio']?.status).toBe('missed');
    const small = byId({
      feeds: { settings: { feeds: 1_000, concurrency: 64 }, resolve_seconds: 20, write_ratio_drop: 0 },
    });
    expect(small['feeds.resolve.seconds']).toMatchObject({ status: 'not measured', figure: 20 });
    expect(small['feeds.resolve.seconds']?.note).toMatch(/1,000 feeds/);
    expect(small['feeds.write_ratio']).toMatchObject({ status: 'not measured' });
  });
});
