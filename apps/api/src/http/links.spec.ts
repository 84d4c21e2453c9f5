import { linkTo } from './links';

describe('linkTo', () => {
  const base = 'https://castlog.example';

  it('keeps every parameter as sent, in its order, and replaces one in its place', () => {
    expect(
      linkTo(
        base,
        '/api/v1/sync',
        { limit: '2', since: 'old', include: 'subscriptions', x: ['1', '2'] },
        {
          since: '2026-07-12T12:10:00.100000Z',
        },
      ),
    ).toBe(`${base}/api/v1/sync?limit=2&since=2026-07-12T12%3A10%3A00.100000Z&include=subscriptions&x=1&x=2`);
  });

  it('adds a replaced parameter the request did not have at the end, and leaves out one set to undefined', () => {
    expect(linkTo(base, '/api/v1/subscriptions', { limit: '5' }, { since: 'abc' })).toBe(
      `${base}/api/v1/subscriptions?limit=5&since=abc`,
    );
    expect(linkTo(base, '/api/v1/sync', { since: 'old', limit: '5' }, { since: undefined })).toBe(
      `${base}/api/v1/sync?limit=5`,
    );
    expect(linkTo(base, '/api/v1/sync', { since: 'old' }, { since: undefined })).toBe(`${base}/api/v1/sync`);
  });

  it('gives a parameter sent twice and replaced one value', () => {
    expect(linkTo(base, '/p', { since: ['a', 'b'], limit: '1' }, { since: 'c' })).toBe(
      `${base}/p?since=c&limit=1`,
    );
  });
});
