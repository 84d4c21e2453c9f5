import { FIRST_RETRY_MS, nextAttemptAfterFailure, recordOf, shownUrl } from './resolver';
import { ResolverProgress } from './resolver-progress';

const DAY = 86_400_000;

describe('nextAttemptAfterFailure', () => {
  it('doubles the wait with each failure in a row, up to the refresh interval', () => {
    const waits = [1, 2, 3, 4].map((failures) => nextAttemptAfterFailure(0, failures, DAY));
    expect(waits).toEqual([FIRST_RETRY_MS, 2 * FIRST_RETRY_MS, 4 * FIRST_RETRY_MS, 8 * FIRST_RETRY_MS]);
    expect(nextAttemptAfterFailure(5, 40, DAY)).toBe(5 + DAY);
    expect(nextAttemptAfterFailure(0, 1, 2000)).toBe(2000);
  });

  it("waits at least what the server's Retry-After asks, within a week", () => {
    expect(nextAttemptAfterFailure(0, 1, DAY, 3 * 3_600_000)).toBe(3 * 3_600_000);
    expect(nextAttemptAfterFailure(0, 1, DAY, 1000)).toBe(FIRST_RETRY_MS);
    expect(nextAttemptAfterFailure(0, 1, DAY, 365 * DAY)).toBe(7 * DAY);
  });
});

describe('recordOf', () => {
  const body = new TextEncoder().encode('<rss/>');
  const info = { title: 'A show', episodeCount: 2 };
  const A = 'https://a.example/feed.xml';

  it('records what the parser read, with the validators', () => {
    const fetched = { kind: 'fetched', body, contentType: 'application/rss+xml', etag: '"1"' } as const;
    expect(recordOf(A, fetched, () => info)).toEqual({
      outcome: 'fetched',
      metadata: info,
      validators: { etag: '"1"', lastModified: undefined },
    });
  });

  it('says where the feed moved: the permanent redirects first, else its new-feed-url', () => {
    const fetched = { kind: 'fetched', body } as const;
    const named = () => ({ ...info, newFeedUrl: 'https://c.example/' });
    expect(recordOf(A, { ...fetched, movedTo: 'https://b.example/' }, named)).toMatchObject({
      movedTo: 'https://b.example/',
      move: { to: 'https://b.example/', cause: 'permanent-redirect' },
    });
    expect(recordOf(A, fetched, named)).toMatchObject({
      movedTo: 'https://c.example/',
      move: { to: 'https://c.example/', cause: 'new-feed-url' },
    });
    expect(recordOf(A, { kind: 'not-modified', movedTo: 'https://b.example/' }, named)).toMatchObject({
      move: { to: 'https://b.example/', cause: 'permanent-redirect' },
    });
  });

  it('finds no move in a feed that names itself, in any spelling', () => {
    const self = () => ({ ...info, newFeedUrl: 'HTTPS://A.example:443/feed.xml#latest' });
    const record = recordOf(A, { kind: 'fetched', body }, self);
    expect(record).not.toHaveProperty('move');
    expect(record).not.toHaveProperty('movedTo');
  });

  it('records a feed the parser refuses as malformed, with its reason', () => {
    const refuse = () => {
      throw new Error('not an RSS or Atom feed');
    };
    expect(recordOf(A, { kind: 'fetched', body }, refuse)).toEqual({
      outcome: 'malformed',
      detail: 'not an RSS or Atom feed',
    });
  });

  it('records a 304 and a failure as the fetcher said them', () => {
    expect(recordOf(A, { kind: 'not-modified', etag: '"2"' }, () => info)).toEqual({
      outcome: 'not-modified',
      validators: { etag: '"2"', lastModified: undefined },
    });
    expect(
      recordOf(
        A,
        { kind: 'failed', outcome: 'http-error', detail: 'HTTP 503', retryAfterMs: 120_000 },
        () => info,
      ),
    ).toEqual({ outcome: 'http-error', detail: 'HTTP 503', retryAfterMs: 120_000 });
  });
});

describe('shownUrl', () => {
  it("hides a feed URL's query, where private feeds keep their tokens", () => {
    expect(shownUrl('https://a.example/feed.xml')).toBe('https://a.example/feed.xml');
    expect(shownUrl('https://a.example/feed?token=secret')).toBe('https://a.example/feed?…');
  });
});

describe('ResolverProgress', () => {
  it('looks stuck only while it runs, feeds are due and no fetch has ended for longer than the threshold', () => {
    const progress = new ResolverProgress();
    progress.measured({ known: 5, due: 3, oldestDueMs: 0 });
    expect(progress.stuck(10_000, 1000)).toBeUndefined();
    progress.started(0);
    expect(progress.stuck(1000, 1000)).toBeUndefined();
    expect(progress.stuck(5000, 1000)).toBe(
      'feed resolver: no fetch has ended for 5 s while 3 feeds are due',
    );
    progress.progressed(4500);
    expect(progress.stuck(5000, 1000)).toBeUndefined();
    progress.measured({ known: 5, due: 0, oldestDueMs: null });
    expect(progress.stuck(60_000, 1000)).toBeUndefined();
    progress.stopped();
    expect(progress.current()).toBeUndefined();
  });
});
