import * as fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import {
  anyJson,
  authorization,
  BODY_LIMIT,
  contentType,
  extraHeaders,
  feedUrl,
  guidValue,
  headerGarbage,
  JSON_TYPES,
  judged,
  loginBody,
  materialize,
  nastyString,
  payload,
  percentEncode,
  Plan,
  printable,
  readAuth,
  readMethod,
  storable,
  Validity,
  Who,
  withExtras,
  World,
  wrongType,
} from './generators';

/**
 * The HTTP fuzzing of the Open Podcast API sync draft's face (CONTRACT.md, "The Open Podcast API
 * sync draft"): what is sent to `POST /auth/login`, `POST /auth/refresh`, `POST` and `GET
 * /api/v1/sync`, `GET /api/v1/subscriptions[/{sync_id}]` — bodies of 0 to 31 actions with wrong
 * types everywhere, huge strings and odd timestamps, bad Client-IDs, bad queries — which statuses
 * each may answer (the draft's 400 for input that fails validation, 401, 404, 413; never 405 or a
 * 5xx), and what a 2xx must hold.
 */

export type SyncDraftRoute =
  'sync-post' | 'sync-get' | 'sync-list' | 'sync-single' | 'draft-login' | 'draft-refresh';

export const SYNC_DRAFT_RULES: Readonly<Record<SyncDraftRoute, { method: string; pattern: RegExp }>> = {
  'sync-post': { method: 'POST', pattern: /^\/api\/v1\/sync$/ },
  'sync-get': { method: 'GET', pattern: /^\/api\/v1\/sync$/ },
  'sync-list': { method: 'GET', pattern: /^\/api\/v1\/subscriptions$/ },
  'sync-single': { method: 'GET', pattern: /^\/api\/v1\/subscriptions\/[^/]+$/ },
  'draft-login': { method: 'POST', pattern: /^\/auth\/login$/ },
  'draft-refresh': { method: 'POST', pattern: /^\/auth\/refresh$/ },
};

export const isSyncDraft = (route: string): route is SyncDraftRoute => route in SYNC_DRAFT_RULES;

// ---------------------------------------------------------------------------------------------
// Client-ID.

/** Three installations of Alice's, so include_own filters some of her changes and not others. */
const CLIENT_IDS = [
  '3f1c7a52-8d4e-4b6a-9c2f-1e0d5b7a9c31',
  '9b2e4f60-1a3c-4d5e-8f7a-6b9c0d1e2f3a',
  'c0ffee00-1234-4abc-8def-0123456789ab',
];

const clientId: fc.Arbitrary<{ value?: string; validity: Validity }> = fc.oneof(
  {
    weight: 20,
    arbitrary: fc.constantFrom(...CLIENT_IDS).map((value) => ({ value, validity: 'valid' as Validity })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(...CLIENT_IDS)
      .map((id) => ({ value: id.toUpperCase(), validity: 'valid' as Validity })),
  },
  {
    weight: 2,
    arbitrary: fc.uuid({ version: 4 }).map((value) => ({ value, validity: 'valid' as Validity })),
  },
  {
    weight: 3,
    arbitrary: fc
      .constantFrom(
        undefined,
        '',
        'not-a-uuid',
        // Version 1, version 7, the nil UUID, a version 4 with the wrong variant.
        'c232ab00-9414-11ec-b3c8-9f6bdeced846',
        '018f4c1e-7b2a-7c3d-9e4f-5a6b7c8d9e0f',
        '00000000-0000-0000-0000-000000000000',
        '3f1c7a52-8d4e-4b6a-cc2f-1e0d5b7a9c31',
        '{3f1c7a52-8d4e-4b6a-9c2f-1e0d5b7a9c31}',
        '3f1c7a528d4e4b6a9c2f1e0d5b7a9c31',
        '3f1c7a52-8d4e-4b6a-9c2f-1e0d5b7a9c31, 9b2e4f60-1a3c-4d5e-8f7a-6b9c0d1e2f3a',
        '3f1c7a52-8d4e-4b6a-9c2f-1e0d5b7a9c3',
        '3f1c7a52-8d4e-4b6a-9c2f-1e0d5b7a9c31x',
      )
      .map((value) => ({ ...(value === undefined ? {} : { value }), validity: 'invalid' as Validity })),
  },
  // A value a fetch client sends (latin-1), possibly one the server's parser refuses before.
  { weight: 1, arbitrary: headerGarbage.map((value) => ({ value, validity: 'invalid' as Validity })) },
);

// ---------------------------------------------------------------------------------------------
// POST /api/v1/sync bodies.

/** occurred_at values the contract accepts: RFC 3339 with an offset, from 1970 to an hour ahead. */
const VALID_ODD_TIMES = [
  '2024-02-29T23:59:59.9999999Z',
  '2024-06-30T12:00:00.123456789Z',
  '2016-12-31T23:59:60Z',
  '2025-01-01t00:00:00z',
  '2025-01-01T02:00:00+02:00',
  '2025-01-01T00:00:00-00:00',
  '1970-01-01T00:00:00Z',
  '2025-03-01T10:00:00.1Z',
];

/** occurred_at values it refuses: no offset, not RFC 3339, before 1970, more than an hour ahead. */
export const INVALID_TIMES = [
  '2025-01-01T00:00:00',
  '2025-01-01T00:00:00.123456',
  '2025-01-01 00:00:00Z',
  '2025-01-01',
  '0000-01-01T00:00:00Z',
  '1969-12-31T23:59:59.999999Z',
  '9999-12-31T23:59:59Z',
  '+275760-09-13T00:00:00Z',
  '2025-02-30T00:00:00Z',
  '2025-01-01T24:00:00Z',
  '2025-01-01T00:00:00+24:00',
  '2025-01-01T00:00:00+0200',
  '2025-01-01T00:00:61Z',
  '1735689600',
  'now',
  '',
];

/** More than an hour ahead by this many seconds or more: rejected whatever the clocks' drift. */
const FAR_AHEAD_SECONDS = 3_900;

const occurredAt: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 12, arbitrary: fc.nat(3 * 24 * 3600).map((seconds) => `{{ago:${seconds}}}`) },
  { weight: 1, arbitrary: fc.nat(3000).map((seconds) => `{{ahead:${seconds}}}`) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: FAR_AHEAD_SECONDS, max: 10 * 365 * 24 * 3600 }).map((s) => `{{ahead:${s}}}`),
  },
  { weight: 2, arbitrary: fc.constantFrom(...VALID_ODD_TIMES) },
  { weight: 3, arbitrary: fc.constantFrom(...INVALID_TIMES) },
  { weight: 1, arbitrary: nastyString },
  { weight: 1, arbitrary: wrongType },
);

const syncIdValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.nat(200).map((i) => `{{sync-id:${i}}}`) },
  { weight: 1, arbitrary: fc.nat(200).map((i) => `{{sync-id-upper:${i}}}`) },
  { weight: 2, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: nastyString },
  { weight: 1, arbitrary: wrongType },
);

const actionIdValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 10, arbitrary: fc.uuid({ version: 4 }) },
  // An action_id Alice sent before: a retry, or the same id with another action.
  { weight: 2, arbitrary: fc.nat(200).map((i) => `{{action-id:${i}}}`) },
  { weight: 1, arbitrary: fc.uuid({ version: 4 }).map((id) => id.toUpperCase()) },
  { weight: 1, arbitrary: fc.uuid().map((id) => id.replace(/-/g, '')) },
  { weight: 1, arbitrary: nastyString },
  { weight: 1, arbitrary: wrongType },
);

const actionData: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 10,
    arbitrary: withExtras(
      fc.record({ feed_url: feedUrl, guid: guidValue, sync_id: syncIdValue }, { requiredKeys: [] }),
    ),
  },
  { weight: 1, arbitrary: wrongType },
);

/** A well-formed action on a few feeds and Alice's sync_ids, at a time within the last day: what
 * a client sends, so that actions apply, are ignored and meet each other. */
const wellFormedAction: fc.Arbitrary<unknown> = fc
  .record({
    action: fc.constantFrom('subscribe', 'subscribe', 'unsubscribe', 'update'),
    action_id: fc.uuid({ version: 4 }),
    seconds: fc.nat(24 * 3600),
    feed: fc.nat(30),
    syncId: fc.nat(200),
    guid: fc.option(fc.uuid({ version: 4 }), { nil: undefined }),
  })
  .map(({ action, action_id, seconds, feed, syncId, guid }) => ({
    type: 'subscription',
    action,
    action_id,
    occurred_at: `{{ago:${seconds}}}`,
    data:
      action === 'subscribe'
        ? { feed_url: `https://fuzz${feed}.example.com/feed.xml`, ...(guid === undefined ? {} : { guid }) }
        : action === 'unsubscribe'
          ? { sync_id: `{{sync-id:${syncId}}}` }
          : {
              sync_id: `{{sync-id:${syncId}}}`,
              ...(guid === undefined ? { feed_url: `https://renamed${feed}.example.com/rss` } : { guid }),
            },
  }));

/** One action: mostly well-formed, any field of the wrong type or value, sometimes not an object. */
const syncActionValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 10, arbitrary: wellFormedAction },
  {
    weight: 20,
    arbitrary: withExtras(
      fc.record(
        {
          type: fc.oneof(
            { weight: 12, arbitrary: fc.constant('subscription') },
            { weight: 1, arbitrary: fc.constantFrom('susbcription', 'Subscription', 'episode', '') },
            { weight: 1, arbitrary: wrongType },
          ),
          action: fc.oneof(
            { weight: 12, arbitrary: fc.constantFrom('subscribe', 'unsubscribe', 'update') },
            { weight: 1, arbitrary: fc.constantFrom('Subscribe', 'delete', 'resubscribe', '') },
            { weight: 1, arbitrary: wrongType },
          ),
          action_id: actionIdValue,
          occurred_at: occurredAt,
          data: actionData,
        },
        { requiredKeys: ['type', 'action', 'action_id', 'occurred_at'] },
      ),
    ),
  },
  { weight: 1, arbitrary: anyJson },
);

/** A well-formed subscribe of one of a few feeds, for batches of a given size. */
const plainSubscribe = (actionId: string, i: number) => ({
  type: 'subscription',
  action: 'subscribe',
  action_id: actionId,
  occurred_at: `{{ago:${i}}}`,
  data: { feed_url: `https://batch${i % 40}.example.com/feed.xml` },
});

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The POST body's shape: an object whose `requests` is an array of 1 to 30 actions (whatever they
 * are). Other keys beside it are left open. */
export const syncBodyValidity = (value: unknown): Validity => {
  if (!isObject(value) || !Array.isArray(value.requests)) return 'invalid';
  if (value.requests.length < 1 || value.requests.length > 30) return 'invalid';
  return Object.keys(value).length === 1 ? 'valid' : 'unsure';
};

const syncBody: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.array(syncActionValue, { minLength: 1, maxLength: 30 }).map((requests) => ({ requests })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(0, 1, 30, 31, 32, 100)
      .chain((n) => fc.array(fc.uuid({ version: 4 }), { minLength: n, maxLength: n }))
      .map((ids) => ({ requests: ids.map(plainSubscribe) })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.array(syncActionValue, { minLength: 1, maxLength: 3 }),
        fc.dictionary(fc.string({ unit: 'binary', maxLength: 8 }), anyJson, { maxKeys: 2 }),
      )
      .map(([requests, extras]) => ({ ...extras, requests })),
  },
  { weight: 1, arbitrary: withExtras(fc.record({ requests: wrongType })) },
  { weight: 1, arbitrary: anyJson },
);

interface SyncPayload {
  readonly body?: string | Uint8Array;
  readonly contentType?: string;
  readonly validity: Validity;
}

/** The body sent as JSON, its shape judging it; a content type other than JSON's may be refused
 * (400) before it is read. Or a body of the other kinds the /v1 fuzzing sends (cut short, nested
 * deep, bytes, odd constants, over the limit, none), none of them a valid one. */
const syncPayload: fc.Arbitrary<SyncPayload> = fc.oneof(
  {
    weight: 20,
    arbitrary: fc.tuple(syncBody, contentType).map(([value, type]) => {
      const shape = storable(value) ? syncBodyValidity(value) : 'invalid';
      const sure = type !== undefined && JSON_TYPES.includes(type);
      return {
        body: JSON.stringify(value),
        ...(type === undefined ? {} : { contentType: type }),
        validity: sure || shape === 'invalid' ? shape : judged(shape, 'unsure'),
      };
    }),
  },
  {
    weight: 3,
    arbitrary: payload(anyJson.map((value) => ({ value, valid: false }))).map(
      ({ body, contentType: type }) => ({
        ...(body === undefined ? {} : { body }),
        ...(type === undefined ? {} : { contentType: type }),
        validity: 'invalid' as Validity,
      }),
    ),
  },
);

// ---------------------------------------------------------------------------------------------
// Queries.

interface QueryPart {
  readonly pairs: readonly [string, string][];
  readonly validity: Validity;
}

const param = (
  key: string,
  valid: fc.Arbitrary<string>,
  invalid: fc.Arbitrary<string>,
  unsure?: fc.Arbitrary<string>,
): fc.Arbitrary<QueryPart> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant({ pairs: [], validity: 'valid' as Validity }) },
    {
      weight: 4,
      arbitrary: valid.map((v) => ({
        pairs: [[key, v]] as [string, string][],
        validity: 'valid' as Validity,
      })),
    },
    {
      weight: 2,
      arbitrary: invalid.map((v) => ({
        pairs: [[key, v]] as [string, string][],
        validity: 'invalid' as Validity,
      })),
    },
    ...(unsure === undefined
      ? []
      : [
          {
            weight: 1,
            arbitrary: unsure.map((v) => ({
              pairs: [[key, v]] as [string, string][],
              validity: 'unsure' as Validity,
            })),
          },
        ]),
  );

const limitParam = param(
  'limit',
  fc.oneof(fc.integer({ min: 1, max: 1000 }).map(String), fc.constantFrom('1', '1000', '01')),
  fc.constantFrom('0', '1001', '-1', '1.5', 'abc', '', '1e2', '0x10', ' 1', '99999999999999999999', '١٢'),
  nastyString,
);

const flagParam = (key: string) =>
  param(key, fc.constantFrom('true', 'false'), fc.constantFrom('TRUE', 'True', '1', '0', 'yes', '', 'null'));

const syncSinceParam = param(
  'since',
  fc.oneof(
    fc.nat(3 * 24 * 3600).map((seconds) => `{{ago:${seconds}}}`),
    fc.nat(30).map((i) => `{{sync-cursor:${i}}}`),
    fc.constantFrom(
      '2023-02-23T14:00:00Z',
      '2023-02-23T14:00:00+14:00',
      '2023-02-23t14:00:00.123456789z',
      '2016-12-31T23:59:60Z',
      '1969-12-31T23:59:59Z',
      '9999-12-31T23:59:59.999999Z',
    ),
  ),
  fc.constantFrom(
    '2023-02-23T14:00:00',
    '2023-02-23',
    '2023-02-30T00:00:00Z',
    '2023-02-23T24:00:00Z',
    '2023-02-23T14:00:00+0200',
    'now',
    '',
    '1700000000',
  ),
  fc.oneof(nastyString, fc.constantFrom('0000-01-01T00:00:00Z', '+275760-09-13T00:00:00Z')),
);

const includeParam = param(
  'include',
  fc.constantFrom('all', 'subscriptions', 'all,subscriptions', 'subscriptions,all'),
  fc.constantFrom('episodes', 'ALL', '', 'all,', ',', 'subscriptions,episodes', 'all subscriptions'),
);

const listSinceParam = param(
  'since',
  fc.nat(30).map((i) => `{{list-cursor:${i}}}`),
  fc.constant('\u0000'),
  // An opaque cursor not taken from a next link: the contract leaves it open.
  fc.oneof(fc.uuid(), nastyString, fc.constantFrom('3', '', '2023-02-23T14:00:00Z')),
);

/** Parts joined into a query string; sometimes a key twice, or an unknown key (both left open). */
const queryOf = (parts: fc.Arbitrary<QueryPart>[]): fc.Arbitrary<{ text: string; validity: Validity }> =>
  fc
    .tuple(
      fc.tuple(...parts),
      fc.oneof(
        { weight: 8, arbitrary: fc.constant<[string, string][]>([]) },
        {
          weight: 1,
          arbitrary: fc.constantFrom<[string, string][]>(
            [['limit', '2']],
            [['include_own', 'true']],
            [['foo', 'bar']],
            [['since[]', 'x']],
          ),
        },
      ),
    )
    .map(([all, extra]) => {
      const pairs = [...all.flatMap((part) => part.pairs), ...extra];
      const validity = judged(...all.map((part) => part.validity), extra.length > 0 ? 'unsure' : 'valid');
      // Placeholders stay as they are, to be replaced when sent (by values a query keeps as is).
      const text = new URLSearchParams(pairs)
        .toString()
        .replace(/%7B%7B([a-z-]+)%3A(\d+)%7D%7D/g, '{{$1:$2}}');
      return { text: pairs.length === 0 ? '' : `?${text}`, validity };
    });

// ---------------------------------------------------------------------------------------------
// Plans.

const syncRequest = (parts: {
  route: SyncDraftRoute;
  method: string;
  target: string;
  clean?: boolean;
  auth: { header?: string; who: Who };
  headers: Record<string, string>;
  clientId?: { value?: string; validity: Validity };
  payload?: SyncPayload;
  input: Validity;
  validBody?: boolean;
}): Plan => {
  const headers = { ...parts.headers };
  if (parts.auth.header !== undefined) headers.authorization = parts.auth.header;
  if (parts.clientId?.value !== undefined) headers['client-id'] = parts.clientId.value;
  if (parts.payload?.contentType !== undefined) headers['content-type'] = parts.payload.contentType;
  return printable({
    route: parts.route,
    method: parts.method,
    target: parts.target,
    clean: parts.clean ?? true,
    auth: parts.auth,
    headers,
    ...(parts.payload?.body === undefined ? {} : { body: parts.payload.body }),
    validBody: parts.validBody ?? false,
    input: judged(parts.input, parts.clientId?.validity ?? 'valid', parts.payload?.validity ?? 'valid'),
  });
};

/** A path segment where a sync_id belongs; `clean` when it is a UUID. */
const syncIdSegment: fc.Arbitrary<{ text: string; clean: boolean }> = fc.oneof(
  { weight: 8, arbitrary: fc.nat(200).map((i) => ({ text: `{{sync-id:${i}}}`, clean: true })) },
  { weight: 2, arbitrary: fc.nat(200).map((i) => ({ text: `{{sync-id-upper:${i}}}`, clean: true })) },
  { weight: 3, arbitrary: fc.uuid().map((text) => ({ text, clean: true })) },
  { weight: 2, arbitrary: nastyString.map((s) => ({ text: percentEncode(s), clean: false })) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom('%', '%zz', '%00', '%2F', 'null', '__proto__', '123', '%7B{{sync-id:0}}%7D', ';a=b')
      .map((text) => ({ text, clean: false })),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 100, max: 20_000 }).map((n) => ({ text: 'a'.repeat(n), clean: false })),
  },
);

const draftRefreshBody: fc.Arbitrary<{ value: unknown; valid: boolean }> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ value: { refresh_token: '{{draft-refresh-token}}' }, valid: true }) },
  {
    weight: 6,
    arbitrary: withExtras(
      fc.record(
        {
          refresh_token: fc.oneof(
            fc.constantFrom('{{alice-token}}', '{{refresh-token}}', '{{draft-refresh-token}}x'),
            nastyString,
            wrongType,
          ),
        },
        { requiredKeys: [] },
      ),
    ).map((value) => ({ value, valid: false })),
  },
  { weight: 1, arbitrary: anyJson.map((value) => ({ value, valid: false })) },
);

/** Every route of the sync draft's face. */
export const syncDraftPlans: fc.Arbitrary<Plan> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .record({ auth: authorization, headers: extraHeaders, clientId, payload: syncPayload })
      .map((p) =>
        syncRequest({
          ...p,
          route: 'sync-post',
          method: 'POST',
          target: '/api/v1/sync',
          input: 'valid',
          validBody: p.payload.validity === 'valid',
        }),
      ),
  },
  {
    weight: 4,
    arbitrary: fc
      .record({
        auth: readAuth,
        headers: extraHeaders,
        clientId,
        method: readMethod,
        query: queryOf([syncSinceParam, limitParam, includeParam, flagParam('include_own')]),
      })
      .map(({ query, ...p }) =>
        syncRequest({ ...p, route: 'sync-get', target: `/api/v1/sync${query.text}`, input: query.validity }),
      ),
  },
  {
    weight: 3,
    arbitrary: fc
      .record({
        auth: readAuth,
        headers: extraHeaders,
        clientId,
        method: readMethod,
        query: queryOf([listSinceParam, limitParam, flagParam('include_unsubscribed')]),
      })
      .map(({ query, ...p }) =>
        syncRequest({
          ...p,
          route: 'sync-list',
          target: `/api/v1/subscriptions${query.text}`,
          input: query.validity,
        }),
      ),
  },
  {
    weight: 3,
    arbitrary: fc
      .record({ auth: readAuth, headers: extraHeaders, clientId, method: readMethod, segment: syncIdSegment })
      .map(({ segment, ...p }) =>
        syncRequest({
          ...p,
          route: 'sync-single',
          target: `/api/v1/subscriptions/${segment.text}`,
          clean: segment.clean,
          input: segment.clean ? 'valid' : 'invalid',
        }),
      ),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ auth: authorization, headers: extraHeaders, payload: payload(loginBody) })
      .map((p) =>
        syncRequest({
          ...p,
          route: 'draft-login',
          method: 'POST',
          target: '/auth/login',
          input: 'unsure',
          payload: { ...p.payload, validity: 'unsure' },
          validBody: p.payload.validBody,
        }),
      ),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ auth: authorization, headers: extraHeaders, payload: payload(draftRefreshBody) })
      .map((p) =>
        syncRequest({
          ...p,
          route: 'draft-refresh',
          method: 'POST',
          target: '/auth/refresh',
          input: 'unsure',
          payload: { ...p.payload, validity: 'unsure' },
          validBody: p.payload.validBody,
        }),
      ),
  },
);

// ---------------------------------------------------------------------------------------------
// Oracle.

/** The statuses a sync draft plan may answer: 413 past the body limit; without credentials 401
 * (or 400 when the body fails to parse, which comes first); with them, the input's 200 or 400
 * (an unknown or another user's sync_id: 404); the login routes 200, 400 or 401. */
export function allowedOnSyncDraft(plan: Plan, bodyBytes: number): Set<number> {
  const carriesBody = plan.body !== undefined;
  if (bodyBytes > BODY_LIMIT) {
    const type = plan.headers['content-type'];
    return new Set(type !== undefined && JSON_TYPES.includes(type) ? [413] : [413, 400]);
  }
  const allowed = new Set<number>();
  // A path the router cannot read as the route (empty, encoded slash, over-long) is not found.
  if (!plan.clean) allowed.add(404);
  if (plan.route === 'draft-login' || plan.route === 'draft-refresh') {
    if (plan.validBody) return new Set([200]);
    return new Set([200, 400, 401]);
  }
  if (plan.auth.who === 'none') return new Set([401, ...(carriesBody ? [400] : []), ...allowed]);
  if (plan.auth.who === 'unsure') allowed.add(401);
  if (plan.input !== 'valid') allowed.add(400);
  if (plan.input !== 'invalid') {
    if (plan.route === 'sync-single') {
      allowed.add(404);
      if (plan.auth.who !== 'bob') allowed.add(200);
    } else allowed.add(200);
  }
  return allowed;
}

const SYNC_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ENTITY_KEYS = new Set(['sync_id', 'guid', 'feed_url', 'subscribed_at', 'unsubscribed_at']);

/** What is wrong with an entity as the draft writes it, or undefined. */
const entityProblem = (entity: unknown): string | undefined => {
  if (!isObject(entity)) return 'not an object';
  const extra = Object.keys(entity).filter((key) => !ENTITY_KEYS.has(key));
  if (extra.length > 0) return `unknown keys ${extra.join(',')}`;
  if (typeof entity.sync_id !== 'string' || !UUID_V4.test(entity.sync_id)) return 'sync_id is not a UUID v4';
  if (typeof entity.guid !== 'string' || typeof entity.feed_url !== 'string')
    return 'guid or feed_url not a string';
  if (typeof entity.subscribed_at !== 'string' || !SYNC_TIME.test(entity.subscribed_at))
    return 'subscribed_at is not UTC with six digits and Z';
  if (
    entity.unsubscribed_at !== undefined &&
    !(typeof entity.unsubscribed_at === 'string' && SYNC_TIME.test(entity.unsubscribed_at))
  )
    return 'unsubscribed_at is not UTC with six digits and Z';
  return undefined;
};

const remember = (list: string[], value: unknown, max = 300) => {
  if (typeof value === 'string' && !list.includes(value)) {
    list.push(value);
    if (list.length > max) list.shift();
  }
};

const sinceOf = (url: unknown): string | null =>
  typeof url === 'string' ? new URL(url, 'http://placeholder').searchParams.get('since') : null;

/** Checks a sync draft route's 2xx answer and learns sync_ids, action_ids, cursors and tokens. */
export function checkSyncDraftAnswer(
  plan: Plan,
  body: any,
  world: World,
  fail: (why: string) => never,
): void {
  const bob = plan.auth.who === 'bob';
  const query = new URL(plan.target, 'http://placeholder').searchParams;
  switch (plan.route as SyncDraftRoute) {
    case 'sync-post':
      return checkPosted(plan, body, world, fail);
    case 'sync-get': {
      if (!Array.isArray(body?.results)) fail('results is not a list');
      if (typeof body.has_more !== 'boolean' || body.has_next !== body.has_more)
        fail('has_more and has_next are not one boolean');
      if (body.results.length > Number(query.get('limit') ?? 50)) fail('more results than limit');
      for (const result of body.results) {
        if (
          result?.type !== 'subscription' ||
          typeof result.last_updated !== 'string' ||
          !SYNC_TIME.test(result.last_updated)
        )
          fail(
            `a result without type subscription and last_updated: ${JSON.stringify(result).slice(0, 200)}`,
          );
        const problem = entityProblem(result.data);
        if (problem !== undefined) fail(`a result's data: ${problem}`);
        remember(world.syncIds, result.data.sync_id);
      }
      const ids = body.results.map((result: { data: { sync_id: string } }) => result.data.sync_id);
      if (new Set(ids).size !== ids.length) fail('an entity twice on one page');
      if (body.results.length > 0 && sinceOf(body.next_since) === null) fail('results without next_since');
      if (body.has_more && sinceOf(body.next_since) === null) fail('has_more without next_since');
      if (body.next_since !== undefined) {
        const next = new URL(body.next_since);
        if (next.pathname !== '/api/v1/sync') fail(`next_since ${body.next_since} leaves the route`);
        for (const key of ['limit', 'include', 'include_own'])
          if (query.has(key) && next.searchParams.get(key) !== query.get(key))
            fail(`next_since ${body.next_since} does not keep ${key}`);
        if (!bob) remember(world.syncCursors, sinceOf(body.next_since), 30);
      }
      if (bob && body.results.length > 0) fail("another user's entities are visible");
      return;
    }
    case 'sync-list': {
      if (!Array.isArray(body?.results)) fail('results is not a list');
      if (typeof body.has_next !== 'boolean' || body.has_more !== body.has_next)
        fail('has_next and has_more are not one boolean');
      if (body.results.length > Number(query.get('limit') ?? 30)) fail('more results than limit');
      for (const entity of body.results) {
        const problem = entityProblem(entity);
        if (problem !== undefined) fail(`an entity: ${problem}`);
        if (query.get('include_unsubscribed') !== 'true' && entity.unsubscribed_at !== undefined)
          fail('an unsubscribed entity without include_unsubscribed=true');
        remember(world.syncIds, entity.sync_id);
      }
      if (body.has_next && sinceOf(body.next) === null) fail('has_next without a next URL');
      if (!bob && body.next !== undefined) remember(world.listCursors, sinceOf(body.next), 30);
      if (bob && body.results.length > 0) fail("another user's entities are visible");
      return;
    }
    case 'sync-single': {
      const problem = entityProblem(body);
      if (problem !== undefined) fail(`the entity: ${problem}`);
      const asked = decodeURIComponent(plan.target.split('/').pop() ?? '');
      if (body.sync_id !== materialize(asked, world).toLowerCase())
        fail('another sync_id than the one asked');
      return;
    }
    case 'draft-login':
      if (
        typeof body?.access_token !== 'string' ||
        typeof body.refresh_token !== 'string' ||
        typeof body.expires_in !== 'number' ||
        typeof body.refresh_expires !== 'string' ||
        body.refresh_endpoint !== '/auth/refresh'
      )
        fail('not a login answer');
      world.draftRefreshToken = body.refresh_token;
      return;
    case 'draft-refresh':
      if (typeof body?.access_token !== 'string' || typeof body.expires_in !== 'number')
        fail('not a refresh answer');
      return;
  }
}

/** POST /api/v1/sync's 200: one result per action in request order, echoing it; a status; a reason
 * exactly when rejected; an entity unless rejected; a time the contract refuses rejected. */
function checkPosted(plan: Plan, body: any, world: World, fail: (why: string) => never): void {
  // Placeholders kept: the occurred_at as generated tells a refused time from an accepted one.
  const sent = JSON.parse(typeof plan.body === 'string' ? plan.body : '{}').requests as unknown[];
  if (!Array.isArray(body?.results) || body.results.length !== sent.length)
    fail(`${body?.results?.length} results for ${sent.length} actions`);
  const learned: unknown[] = [];
  sent.forEach((raw, i) => {
    const result = body.results[i];
    const action = isObject(raw) ? raw : {};
    // A placeholder's value is the one sent only while the world has one to give (else a random
    // one was sent): such a field is checked to be a string. A value that is not a string is echoed
    // as JSON text of the same value, its keys in any order (the PostgreSQL log stores events as
    // jsonb, which orders them its own way).
    const echoes = (answered: unknown, value: unknown) => {
      if (typeof value === 'string')
        return value.includes('{{') ? typeof answered === 'string' : answered === value;
      if (value === undefined) return answered === '';
      try {
        return typeof answered === 'string' && isDeepStrictEqual(JSON.parse(answered), value);
      } catch {
        return false;
      }
    };
    if (
      !echoes(result?.type, action.type) ||
      !echoes(result.action, action.action) ||
      !echoes(result.action_id, action.action_id)
    )
      fail(`result ${i} does not echo its action's type, action and action_id`);
    if (!['applied', 'ignored', 'rejected'].includes(result.status))
      fail(`result ${i}: status ${result.status}`);
    if ((result.status === 'rejected') !== (typeof result.reason === 'string' && result.reason.length > 0))
      fail(`result ${i}: a reason exactly when rejected`);
    if (!isObject(result.data)) fail(`result ${i}: data is not an object`);
    if ('entity' in result) fail(`result ${i}: entity beside data`);
    if (result.status !== 'rejected') {
      const problem = entityProblem(result.data);
      if (problem !== undefined) fail(`result ${i}: ${problem}`);
      remember(world.syncIds, result.data.sync_id);
    }
    const time = action.occurred_at;
    const refused =
      (typeof time === 'string' && INVALID_TIMES.includes(time)) ||
      (typeof time === 'string' && Number(/^\{\{ahead:(\d+)\}\}$/.exec(time)?.[1] ?? 0) >= FAR_AHEAD_SECONDS);
    // A fresh action_id (not one sent before) with a refused time is rejected.
    const fresh = typeof action.action_id === 'string' && !action.action_id.startsWith('{{');
    if (refused && fresh && result.status !== 'rejected')
      fail(`result ${i}: occurred_at ${String(time)} is ${result.status}, not rejected`);
    learned.push(result.action_id);
  });
  for (const id of learned)
    if (typeof id === 'string' && UUID_V4.test(id.toLowerCase())) remember(world.actionIds, id);
}
