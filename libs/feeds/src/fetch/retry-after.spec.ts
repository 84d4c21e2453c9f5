import { retryAfterMsOf } from './feed-fetcher';

describe('retryAfterMsOf', () => {
  const now = Date.parse('2026-12-07T06:00:00Z');

  it('a delay in seconds', () => {
    expect(retryAfterMsOf('120', now)).toBe(120_000);
    expect(retryAfterMsOf(' 0 ', now)).toBe(0);
  });

  it('an HTTP date: the time until then, never negative', () => {
    expect(retryAfterMsOf('Mon, 07 Dec 2026 06:01:30 GMT', now)).toBe(90_000);
    expect(retryAfterMsOf('Mon, 07 Dec 2026 05:00:00 GMT', now)).toBe(0);
  });

  it('absent or unreadable: none', () => {
    expect(retryAfterMsOf(undefined, now)).toBeUndefined();
    expect(retryAfterMsOf('', now)).toBeUndefined();
    expect(retryAfterMsOf('soon', now)).toBeUndefined();
    expect(retryAfterMsOf('-5', now)).toBeUndefined();
  });
});
