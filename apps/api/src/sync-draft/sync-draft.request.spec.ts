import { openApiSchema, parseWith } from '../http/schema';
import {
  parseClientId,
  parsePostSync,
  parseSubscriptionsQuery,
  parseSyncQuery,
  POST_SYNC,
  readSince,
  SYNC_ID_PARAMETER,
} from './sync-draft.request';

/** What a refusal says after `Input could not be validated: `. */
const refusal = (read: () => unknown): string => {
  try {
    read();
  } catch (error) {
    return (error as Error).message.replace(/^Input could not be validated: /, '');
  }
  throw new Error('accepted');
};

const CLIENT = 'cca4ad10-dc35-4572-8f11-125dc465428a';

describe('the Client-ID header', () => {
  it('is a UUID version 4 in any case, read lower-case', () => {
    expect(parseClientId(CLIENT)).toBe(CLIENT);
    expect(parseClientId(CLIENT.toUpperCase())).toBe(CLIENT);
  });

  it('refuses a missing one, another version or variant, and anything else', () => {
    for (const value of [
      undefined,
      '',
      'cca4ad10-dc35-1572-8f11-125dc465428a',
      'cca4ad10-dc35-4572-cf11-125dc465428a',
      `${CLIENT} `,
      `${CLIENT}, ${CLIENT}`,
      [CLIENT, CLIENT],
    ])
      expect(refusal(() => parseClientId(value))).toBe('the Client-ID header must be a UUID version 4');
  });
});

describe('POST /api/v1/sync body', () => {
  const action = { type: 'subscription', action: 'subscribe' };

  it('holds 1 to 30 actions, each kept as sent, whatever it is', () => {
    expect(parsePostSync({ requests: [action, 42, null, 'x'] })).toEqual([action, 42, null, 'x']);
    expect(parsePostSync({ requests: Array(30).fill(action) })).toHaveLength(30);
  });

  it('refuses another shape', () => {
    expect(refusal(() => parsePostSync({ requests: [] }))).toBe('requests must not be empty');
    expect(refusal(() => parsePostSync({ requests: Array(31).fill(action) }))).toBe(
      'requests must hold at most 30 actions',
    );
    expect(refusal(() => parsePostSync({ requests: action }))).toBe('requests must be an array');
    expect(refusal(() => parsePostSync({}))).toBe('requests must be an array');
    expect(refusal(() => parsePostSync([action]))).toBe('the body must be a JSON object');
    expect(refusal(() => parsePostSync({ requests: ['\u0000'] }))).toBe(
      'strings must not hold U+0000 or unpaired surrogates',
    );
  });

  it('is described with the draft action as its items', () => {
    expect(openApiSchema(POST_SYNC)).toMatchObject({
      type: 'object',
      required: ['requests'],
      properties: {
        requests: {
          type: 'array',
          minItems: 1,
          maxItems: 30,
          items: { required: ['type', 'action', 'action_id', 'occurred_at', 'data'] },
        },
      },
    });
  });
});

describe('GET /api/v1/sync query', () => {
  it('defaults to everything, 50 at a time, all entities, without the own client', () => {
    expect(parseSyncQuery({})).toEqual({ since: null, limit: 50, includeOwn: false });
  });

  it('reads since to the microsecond, include as a comma-separated list, include_own and limit', () => {
    expect(
      parseSyncQuery({
        since: '2026-07-11T17:30:00.1234567+02:00',
        limit: '1000',
        include: 'subscriptions,all',
        include_own: 'true',
      }),
    ).toEqual({ since: Date.parse('2026-07-11T15:30:00Z') * 1000 + 123456, limit: 1000, includeOwn: true });
    expect(parseSyncQuery({ limit: '1', include: 'all', include_own: 'false' })).toMatchObject({
      limit: 1,
      includeOwn: false,
    });
  });

  it('reads an offset whose + came unencoded as a space, and a time before 1970 as the beginning', () => {
    expect(readSince('2026-07-11T17:30:00 02:00')).toBe(Date.parse('2026-07-11T15:30:00Z') * 1000);
    expect(readSince('0001-01-01T00:00:00Z')).toBe(0);
    expect(readSince('1969-12-31T23:59:59.999999+01:00')).toBe(0);
    expect(readSince('1969-12-31T23:59:59.999-01:00')).toBe(3_599_999_000);
  });

  it('refuses what it cannot read', () => {
    const refused = (query: Record<string, unknown>) => refusal(() => parseSyncQuery(query));
    for (const since of ['yesterday', '2026-07-11T15:30:00', '2026-02-30T00:00:00Z', '0001-01-01T00:00:00'])
      expect(refused({ since })).toBe('since must be an RFC 3339 date-time with an offset');
    for (const limit of ['0', '1001', '-1', '1.5', 'x', ''])
      expect(refused({ limit })).toBe('limit must be an integer from 1 to 1000');
    for (const include of ['', 'episodes', 'all,episodes', 'subscriptions,', 'ALL'])
      expect(refused({ include })).toBe('include must be all or subscriptions (comma-separated)');
    expect(refused({ include_own: 'yes' })).toBe('include_own must be true or false');
    expect(refused({ limit: ['1', '2'] })).toBe('limit must be given once');
  });
});

describe('GET /api/v1/subscriptions query and path', () => {
  it('defaults to the subscribed ones, 30 at a time, from the first', () => {
    expect(parseSubscriptionsQuery({})).toEqual({ after: null, limit: 30, includeUnsubscribed: false });
  });

  it('reads the cursor of a next link, the limit and include_unsubscribed', () => {
    const syncId = '4648B4D7-90BF-497C-A5E7-8383D1083D76';
    expect(parseSubscriptionsQuery({ since: syncId, limit: '5', include_unsubscribed: 'true' })).toEqual({
      after: syncId.toLowerCase(),
      limit: 5,
      includeUnsubscribed: true,
    });
    expect(refusal(() => parseSubscriptionsQuery({ since: '3' }))).toBe(
      'since must be the value a next link carries',
    );
    expect(refusal(() => parseSubscriptionsQuery({ include_unsubscribed: '1' }))).toBe(
      'include_unsubscribed must be true or false',
    );
  });

  it('reads a path sync_id as a UUID, lower-case, and refuses anything else', () => {
    expect(parseWith(SYNC_ID_PARAMETER, 'AA840671-FC3B-430B-B8F2-92E6E9C7832B')).toBe(
      'aa840671-fc3b-430b-b8f2-92e6e9c7832b',
    );
    expect(refusal(() => parseWith(SYNC_ID_PARAMETER, 'feed1'))).toBe('sync_id must be a UUID');
  });
});
