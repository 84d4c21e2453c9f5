import * as fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import type { TestUser } from '../support/start-castlog';

/**
 * What the HTTP fuzzing (test/e2e/fuzz.e2e-spec.ts) sends: plans, as plain data with placeholders
 * for the values that only exist at run time, and the fast-check arbitraries that generate them —
 * for every route, for unknown routes, and as raw HTTP/1.1 bytes.
 */

/** The service's body limit (BODY_LIMIT_BYTES' default). */
export const BODY_LIMIT = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Plans: what a run sends, as plain data (so fast-check prints it), with placeholders for the
// values that only exist at run time (tokens, guids the user has, deletion ids).

export type Who = 'alice' | 'bob' | 'none' | 'unsure';
export type RouteName =
  'add' | 'list' | 'get' | 'patch' | 'delete' | 'deletion' | 'login' | 'refresh' | 'unknown';

export interface Plan {
  readonly route: RouteName;
  readonly method: string;
  /** Path and query, with placeholders; always starts with a single `/`. */
  readonly target: string;
  /** The path's variable part is a well-formed value (a UUID, a positive integer). */
  readonly clean: boolean;
  readonly auth: { readonly header?: string; readonly who: Who };
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  /** The body is a JSON object of the route's valid shape, sent as JSON. */
  readonly validBody?: boolean;
}

export interface World {
  alice: TestUser;
  bob: TestUser;
  refreshToken: string;
  knownGuids: string[];
  deletionIds: number[];
}

/** Percent-encodes every byte of the text's UTF-8 (lone surrogates become U+FFFD). */
const percentEncode = (text: string) =>
  [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');

/** `Basic <base64>` of the text, placeholders in it replaced first (`{{b64:…}}`). */
const basicOf = (text: string) => `Basic {{b64:${percentEncode(text)}}}`;
const basic = (name: string, password: string) => basicOf(`${name}:${password}`);

/** Replaces the placeholders by the world's values. */
export function materialize(text: string, world: World): string {
  return text
    .replace(/\{\{b64:((?:%[0-9a-f]{2})*)\}\}/g, (_all, encoded: string) => {
      const inner = Buffer.from(encoded.replace(/%/g, ''), 'hex').toString('utf8');
      return Buffer.from(materialize(inner, world), 'utf8').toString('base64');
    })
    .replace(/\{\{([a-z-]+)(?::(\d+))?\}\}/g, (all, name: string, index?: string) => {
      const at = <T>(values: readonly T[]): T | undefined =>
        values.length === 0 ? undefined : values[Number(index ?? 0) % values.length];
      switch (name) {
        case 'alice-token':
          return world.alice.token;
        case 'alice-basic':
          return `Basic ${Buffer.from(`${world.alice.name}:${world.alice.password}`).toString('base64')}`;
        case 'alice-name':
          return world.alice.name;
        case 'alice-password':
          return world.alice.password;
        case 'bob-token':
          return world.bob.token;
        case 'refresh-token':
          return world.refreshToken;
        case 'known':
          return at(world.knownGuids) ?? randomUUID();
        case 'known-upper':
          return (at(world.knownGuids) ?? randomUUID()).toUpperCase();
        case 'deletion':
          return String(at(world.deletionIds) ?? 1);
        default:
          return all;
      }
    });
}

/** Long strings and byte arrays cut short, so a counterexample's report stays readable. */
export function describeValue(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item === 'string' && item.length > 160)
      return `${item.slice(0, 120)}…(${item.length} characters)…${item.slice(-20)}`;
    if (item instanceof Uint8Array || (item as { type?: string })?.type === 'Buffer') {
      const bytes = Buffer.from(item instanceof Uint8Array ? item : (item as { data: number[] }).data);
      return `<${bytes.length} bytes ${JSON.stringify(bytes.subarray(0, 200).toString('latin1'))}>`;
    }
    return item;
  });
}

/** Makes fast-check print the value with `describeValue`. */
export const printable = <T extends object>(value: T): T =>
  Object.defineProperty(value, fc.toStringMethod, { value: () => describeValue(value), enumerable: false });

// ---------------------------------------------------------------------------------------------
// Arbitraries.

const latin1 = fc.integer({ min: 0x20, max: 0xff }).map((code) => String.fromCharCode(code));
/** Control characters a fetch client lets through (not NUL, CR, LF) but HTTP does not allow. */
const control = fc
  .integer({ min: 0x01, max: 0x1f })
  .filter((code) => code !== 0x0a && code !== 0x0d)
  .map((code) => String.fromCharCode(code));

/** Header values a client can send: latin-1 text, sometimes control characters, sometimes long. */
const headerGarbage = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: latin1, maxLength: 80 }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.oneof(latin1, control), minLength: 1, maxLength: 20 }) },
  { weight: 1, arbitrary: fc.integer({ min: 200, max: 20_000 }).map((n) => 'r'.repeat(n)) },
);

/** Strings with the characters that break things: NUL, lone surrogates, BOM, RTL override, quotes. */
const nastyString = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\u0000',
      'a\u0000b',
      '\ud800',
      'x\udfffy',
      '\ufeff',
      '\u202e',
      '%00',
      '%',
      '../../etc/passwd',
      "' OR 1=1 --",
      '"; DROP TABLE subscriptions; --',
      '${jndi:ldap://127.0.0.1/x}',
      '<script>alert(1)</script>',
      '__proto__',
      'constructor',
      'null',
      'true',
      '1e999',
      '🎙️📻',
      'ſ',
      'İ',
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 2_000, max: 200_000 }).map((n) => 'é'.repeat(n)) },
);

const anyJson = fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' });

/** Values of the wrong type for any field. */
const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(anyJson, { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), anyJson, { maxKeys: 3 }),
  fc.constant(Number.MAX_SAFE_INTEGER),
  fc.constant(-0),
);

const feedUrl: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.nat(20).map((n) => `https://fuzz${n}.example.com/feed.xml`) },
  { weight: 3, arbitrary: fc.webUrl({ withQueryParameters: true, withFragments: true }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'HTTPS://FUZZ1.EXAMPLE.COM:443/feed.xml#top',
      'http://fuzz2.example.com:80/feed.xml',
      'ftp://fuzz.example.com/feed',
      'example.com/feed',
      'example.com:8080/rss',
      'http://',
      'https:///rss',
      'https:fuzz.example.com',
      'https://[::1]/feed',
      'http://127.0.0.1:0/',
      'https://exa mple.com/',
      'javascript:alert(1)',
      'data:text/plain,hi',
      'https://xn--nxasmq6b.example/',
      'https://fuzz.example.com/\u0000',
      'https://fuzz\u0000.example.com/',
      'https://user:pass@fuzz.example.com/',
      ' https://fuzz.example.com/ ',
      'https://fuzz.example.com/\ud800',
      'https://例え.テスト/フィード',
    ),
  },
  { weight: 2, arbitrary: nastyString.map((s) => `https://fuzz.example.com/${s}`) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 2_040, max: 2_060 }).map((n) => `https://f.example/${'a'.repeat(n)}`),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 10_000, max: 900_000 }).map((n) => `https://f.example/${'b'.repeat(n)}`),
  },
  { weight: 2, arbitrary: nastyString },
  { weight: 2, arbitrary: wrongType },
);

const guidValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.uuid() },
  { weight: 3, arbitrary: fc.nat(200).map((i) => `{{known:${i}}}`) },
  { weight: 1, arbitrary: fc.nat(200).map((i) => `{{known-upper:${i}}}`) },
  { weight: 1, arbitrary: fc.uuid().map((u) => `{${u}}`) },
  { weight: 1, arbitrary: fc.uuid().map((u) => u.replace(/-/g, '')) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '00000000-0000-0000-0000-000000000000',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
    ),
  },
  { weight: 1, arbitrary: nastyString },
  { weight: 2, arbitrary: wrongType },
);

/** Adds a few unknown keys to an object. */
const withExtras = <T extends Record<string, unknown>>(object: fc.Arbitrary<T>) =>
  fc
    .tuple(object, fc.dictionary(fc.string({ unit: 'binary', maxLength: 8 }), anyJson, { maxKeys: 2 }))
    .map(([fields, extras]) => ({ ...extras, ...fields }));

interface JsonBody {
  readonly value: unknown;
  readonly valid: boolean;
}

const smallValidItems = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ feed_url: `https://bulk${i % 50}.example.com/feed` }));

const addBody: fc.Arbitrary<JsonBody> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .array(
        fc.oneof(
          {
            weight: 12,
            arbitrary: withExtras(fc.record({ feed_url: feedUrl, guid: guidValue }, { requiredKeys: [] })),
          },
          { weight: 1, arbitrary: wrongType },
        ),
        { minLength: 0, maxLength: 6 },
      )
      .map((items) => ({
        value: { subscriptions: items },
        valid:
          items.length > 0 &&
          items.every((item) => typeof item === 'object' && item !== null && !Array.isArray(item)),
      })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(999, 1000, 1001)
      .map((n) => ({ value: { subscriptions: smallValidItems(n) }, valid: n <= 1000 })),
  },
  {
    weight: 1,
    arbitrary: withExtras(fc.record({ subscriptions: wrongType })).map((value) => ({ value, valid: false })),
  },
  { weight: 1, arbitrary: anyJson.map((value) => ({ value, valid: false })) },
);

const plausibleFeedUrl = fc.oneof(
  fc.nat(20).map((n) => `https://fuzz${n}.example.com/feed.xml`),
  fc.webUrl({ validSchemes: ['http', 'https'] }),
);
const plausibleGuid = fc.oneof(
  fc.uuid(),
  fc.nat(200).map((i) => `{{known:${i}}}`),
);

const patchBody: fc.Arbitrary<JsonBody> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .record(
        { new_feed_url: plausibleFeedUrl, new_guid: plausibleGuid, is_subscribed: fc.boolean() },
        { requiredKeys: [] },
      )
      .filter((fields) => Object.keys(fields).length > 0)
      .map((value) => ({ value, valid: false })),
  },
  {
    weight: 8,
    arbitrary: withExtras(
      fc.record(
        {
          new_feed_url: feedUrl,
          new_guid: guidValue,
          is_subscribed: fc.oneof(
            { weight: 4, arbitrary: fc.boolean() },
            { weight: 1, arbitrary: wrongType },
          ),
        },
        { requiredKeys: [] },
      ),
    ).map((value) => ({ value, valid: false })),
  },
  { weight: 1, arbitrary: anyJson.map((value) => ({ value, valid: false })) },
);

const credential = fc.oneof(
  { weight: 3, arbitrary: fc.constant('{{alice-name}}') },
  { weight: 2, arbitrary: fc.constant('{{alice-password}}') },
  { weight: 3, arbitrary: nastyString },
  { weight: 1, arbitrary: wrongType },
);

const loginBody: fc.Arbitrary<JsonBody> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constant({
      value: { username: '{{alice-name}}', password: '{{alice-password}}' },
      valid: true,
    }),
  },
  {
    weight: 6,
    arbitrary: withExtras(
      fc.record({ username: credential, password: credential }, { requiredKeys: [] }),
    ).map((value) => ({ value, valid: false })),
  },
  { weight: 1, arbitrary: anyJson.map((value) => ({ value, valid: false })) },
);

const refreshBody: fc.Arbitrary<JsonBody> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ value: { refresh_token: '{{refresh-token}}' }, valid: true }) },
  {
    weight: 6,
    arbitrary: withExtras(
      fc.record(
        {
          refresh_token: fc.oneof(
            fc.constant('{{alice-token}}'),
            fc
              .string({ unit: fc.constantFrom(...'abcXYZ019_-'), minLength: 43, maxLength: 43 })
              .map((s) => `cl_${s}`),
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

/** `[[[…]]]` or `{"a":{"a":…}}`, `depth` levels, optionally inside a field of an otherwise fine body. */
const deepJson = fc
  .record({
    depth: fc.oneof(fc.integer({ min: 50, max: 3_000 }), fc.integer({ min: 3_000, max: 200_000 })),
    kind: fc.constantFrom('array', 'object'),
    wrap: fc.constantFrom('none', 'feed_url', 'guid', 'new_feed_url', 'username', 'subscriptions'),
  })
  .map(({ depth, kind, wrap }) => {
    const deep =
      kind === 'array'
        ? `${'['.repeat(depth)}${']'.repeat(depth)}`
        : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    switch (wrap) {
      case 'feed_url':
        return `{"subscriptions":[{"feed_url":${deep}}]}`;
      case 'guid':
        return `{"subscriptions":[{"feed_url":"https://deep.example.com/","guid":${deep}}]}`;
      case 'new_feed_url':
        return `{"new_feed_url":${deep},"is_subscribed":true}`;
      case 'username':
        return `{"username":${deep},"password":"x"}`;
      case 'subscriptions':
        return `{"subscriptions":${deep}}`;
      default:
        return deep;
    }
  });

/** The service refuses (405) strings and keys with U+0000 or a lone surrogate, which PostgreSQL
 * cannot store, and bodies nested deeper than 32 levels. */
// eslint-disable-next-line no-control-regex -- U+0000 is what it looks for
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
function storable(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return !UNSTORABLE.test(value);
  if (typeof value !== 'object' || value === null) return true;
  if (depth >= 32) return false;
  return Object.entries(value).every(([key, item]) => !UNSTORABLE.test(key) && storable(item, depth + 1));
}

interface Payload {
  readonly body?: string | Uint8Array;
  readonly contentType?: string;
  readonly validBody: boolean;
}

export const JSON_TYPES = ['application/json', 'application/json; charset=utf-8'];
const contentType = fc.oneof(
  { weight: 30, arbitrary: fc.constantFrom(...JSON_TYPES) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'APPLICATION/JSON',
      'application/json;charset=UTF-8',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'application/json;;',
      'application/json; boundary=x; charset=utf-8; a=b',
      'application/vnd.api+json',
      'application/merge-patch+json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=----x',
      'text/plain',
      'text/json',
      'application/xml',
      'application/octet-stream',
      '*/*',
      'json',
      'application/',
      '',
    ),
  },
  { weight: 1, arbitrary: headerGarbage },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

/** A body for a route with a JSON body: its JSON shape sent in many ways. */
const payload = (json: fc.Arbitrary<JsonBody>): fc.Arbitrary<Payload> =>
  fc.oneof(
    {
      weight: 24,
      arbitrary: fc.tuple(json, contentType).map(([{ value, valid }, type]) => ({
        body: JSON.stringify(value),
        contentType: type,
        validBody: valid && type !== undefined && JSON_TYPES.includes(type) && storable(value),
      })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(json, fc.nat()).map(([{ value }, cut]) => {
        const text = JSON.stringify(value);
        return {
          body: text.slice(0, cut % Math.max(1, text.length)),
          contentType: 'application/json',
          validBody: false,
        };
      }),
    },
    {
      weight: 1,
      arbitrary: deepJson.map((body) => ({ body, contentType: 'application/json', validBody: false })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.uint8Array({ maxLength: 300 }), fc.constantFrom('application/json', undefined))
        .map(([bytes, type]) => ({ body: bytes, contentType: type, validBody: false })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          '',
          ' ',
          'null',
          'true',
          '1e999',
          '-0',
          '"x"',
          '[]',
          '{}',
          '{"__proto__":{"polluted":1}}',
          '{"constructor":{"prototype":{"polluted":1}}}',
          '\ufeff{}',
          '{"a":1,"a":2}',
          'NaN',
          '{subscriptions: []}',
          "{'a':1}",
          '{"subscriptions":[{"feed_url":"https://x.example/"}]}garbage',
          '{"subscriptions":[{"feed_url":"\\ud800"}]}',
          '{"subscriptions":[{"feed_url":"\\u0000"}]}',
        )
        .map((body) => ({ body, contentType: 'application/json', validBody: false })),
    },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 1, max: 64 * 1024 }).map((extra) => ({
        body: `{"subscriptions":[{"feed_url":"https://big.example/${'x'.repeat(BODY_LIMIT + extra)}"}]}`,
        contentType: 'application/json',
        validBody: false,
      })),
    },
    { weight: 1, arbitrary: fc.constant({ validBody: false }) },
  );

const authorization: fc.Arbitrary<{ header?: string; who: Who }> = fc.oneof(
  { weight: 30, arbitrary: fc.constant({ header: 'Bearer {{alice-token}}', who: 'alice' as Who }) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom('bearer', 'BEARER', 'BeArEr'), fc.integer({ min: 1, max: 3 }))
      .map(([scheme, spaces]) => ({
        header: `${scheme}${' '.repeat(spaces)}{{alice-token}}`,
        who: 'alice' as Who,
      })),
  },
  { weight: 2, arbitrary: fc.constant({ header: '{{alice-basic}}', who: 'alice' as Who }) },
  {
    weight: 8,
    arbitrary: fc
      .oneof(
        fc.constant(undefined),
        fc.constantFrom(
          '',
          'Bearer',
          'Bearer ',
          'Basic',
          'Basic !!!',
          'Basic ====',
          'Basic Og==',
          'Digest username="x"',
          'Token {{alice-token}}',
          'Bearer {{alice-token}}x',
          'Bearer {{alice-token}} extra',
          'Bearer {{alice-token}},Bearer {{alice-token}}',
          'Bearer {{refresh-token}}',
          'Bearer {{known:0}}',
          'Basic {{alice-token}}',
          basic('nul\u0000name', 'pw'),
          basic('{{alice-name}}\u0000', '{{alice-password}}'),
          basic('has space', 'pw'),
        ),
        fc.constant(basicOf('{{alice-name}}')),
        fc.constant(basicOf(':{{alice-password}}')),
        fc
          .string({ unit: 'binary', maxLength: 30 })
          .map((password) => basic('{{alice-name}}', `${password}!`)),
        fc
          .tuple(fc.string({ unit: 'binary', maxLength: 30 }), fc.string({ unit: 'binary', maxLength: 30 }))
          .map(([name, password]) => basic(`nobody${name}`, password)),
        fc.uint8Array({ maxLength: 60 }).map((bytes) => `Basic ${Buffer.from(bytes).toString('base64')}`),
        fc
          .string({ unit: fc.constantFrom(...'abcdefXYZ0123456789_-'), minLength: 43, maxLength: 43 })
          .map((s) => `Bearer cl_${s}`),
        fc.integer({ min: 1_000, max: 12_000 }).map((n) => `Bearer ${'t'.repeat(n)}`),
        headerGarbage.map((garbage) => `Bearer ${garbage}`),
        headerGarbage,
      )
      .map((header) => ({ ...(header === undefined ? {} : { header }), who: 'none' as Who })),
  },
);

/** X-Request-Id, Accept and other headers; most runs send none of them. */
const extraHeaders: fc.Arbitrary<Record<string, string>> = fc
  .record(
    {
      'x-request-id': fc.oneof(
        fc.constantFrom(
          'fuzz-1',
          'a'.repeat(128),
          'a'.repeat(129),
          'with space',
          'ünïcödé',
          '../../x',
          '{{known:0}}',
        ),
        headerGarbage,
      ),
      accept: fc.constantFrom('text/html', 'application/xml', '*/*', 'application/json;q=0', 'garbage/'),
      'accept-encoding': fc.constantFrom('gzip', 'br', 'identity;q=0', 'x-unknown', '*;q=0'),
      'accept-language': headerGarbage,
      'x-forwarded-for': fc.constantFrom('1.2.3.4', 'garbage', '::1, 10.0.0.1'),
      'x-http-method-override': fc.constantFrom('DELETE', 'PUT', 'GARBAGE'),
      cookie: headerGarbage,
    },
    { requiredKeys: [] },
  )
  .map((headers) => headers as Record<string, string>);

/** A path segment where a guid belongs. `clean` when it is a UUID. */
const guidSegment: fc.Arbitrary<{ text: string; clean: boolean }> = fc.oneof(
  { weight: 8, arbitrary: fc.nat(200).map((i) => ({ text: `{{known:${i}}}`, clean: true })) },
  { weight: 2, arbitrary: fc.nat(200).map((i) => ({ text: `{{known-upper:${i}}}`, clean: true })) },
  { weight: 4, arbitrary: fc.uuid().map((text) => ({ text, clean: true })) },
  { weight: 1, arbitrary: fc.uuid().map((u) => ({ text: `%7B${u}%7D`, clean: false })) },
  { weight: 2, arbitrary: nastyString.map((s) => ({ text: percentEncode(s), clean: false })) },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: fc.constantFrom(..."%2Fe.;:@!$&'()*+,=a0-_~"), minLength: 1, maxLength: 12 })
      .map((text) => ({ text, clean: false })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(
        '%',
        '%zz',
        '%00',
        '%2F',
        '%2f..%2f',
        '%C0%AF',
        '%FF',
        '%E2%80%AE',
        ';',
        ';a=b',
        'null',
        'undefined',
        '__proto__',
        'constructor',
        '%20',
        '+',
        '00000000-0000-0000-0000-00000000000g',
        '123',
      )
      .map((text) => ({ text, clean: false })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 100, max: 20_000 }), fc.constantFrom('a', '%41', '%F0%9F%8E%99'))
      .map(([n, unit]) => ({ text: unit.repeat(Math.ceil(n / unit.length)), clean: false })),
  },
);

const deletionSegment: fc.Arbitrary<{ text: string; clean: boolean }> = fc.oneof(
  { weight: 5, arbitrary: fc.nat(100).map((i) => ({ text: `{{deletion:${i}}}`, clean: true })) },
  {
    weight: 3,
    arbitrary: fc.integer({ min: 1, max: 1_000_000 }).map((n) => ({ text: String(n), clean: true })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(
        '0',
        '-1',
        '1.5',
        '1e3',
        '0x10',
        '+1',
        '%201',
        '%D9%A1',
        '999999999999999',
        '9999999999999999',
        '99999999999999999999',
        '9223372036854775807',
        '9223372036854775808',
        '00001',
        'NaN',
        'Infinity',
      )
      .map((text) => ({ text, clean: false })),
  },
  { weight: 1, arbitrary: nastyString.map((s) => ({ text: percentEncode(s), clean: false })) },
);

const queryValue = fc.oneof(
  fc.integer({ min: -5, max: 250 }).map(String),
  fc
    .date({ min: new Date(-62_000_000_000_000), max: new Date(253_402_300_799_000), noInvalidDate: true })
    .map((d) => d.toISOString()),
  fc.constantFrom(
    '',
    '1',
    '100',
    '101',
    '0',
    '1e2',
    '0x10',
    '١٢',
    ' 1',
    '99999999999999999999',
    '2023-02-23T14:00:00Z',
    '2023-02-23T14:00:00+14:00',
    '2023-02-23T14:00:00-23:59',
    '2023-02-23t14:00:00.123456789z',
    '2023-02-23 14:00:00',
    '2023-02-30T00:00:00Z',
    '2023-02-23T24:00:00Z',
    '2023-02-23T14:00:60Z',
    '0000-01-01T00:00:00Z',
    '0050-01-01T00:00:00Z',
    '9999-12-31T23:59:59.999Z',
    '275760-09-13T00:00:00Z',
    '2023-02-23T14:00:00+24:00',
    '2023-02-23',
    'now',
  ),
  nastyString,
);

const queryKey = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('since', 'page', 'per_page') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'since[]',
      'page[a]',
      'per_page.x',
      '__proto__',
      'constructor',
      'PAGE',
      'hasOwnProperty',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
);

const queryString: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.constant('') },
  {
    weight: 6,
    arbitrary: fc
      .array(fc.tuple(queryKey, queryValue), { maxLength: 5 })
      .map((pairs) => (pairs.length === 0 ? '' : `?${new URLSearchParams(pairs).toString()}`)),
  },
  {
    weight: 2,
    arbitrary: fc
      .string({ unit: fc.constantFrom(...'&=%?[]a1;+.-_sincepg'), maxLength: 40 })
      .map((raw) => `?${raw}`),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 20_000 }).map((n) => `?since=${'1'.repeat(n)}`) },
);

const request = (parts: {
  route: RouteName;
  method: string;
  target: string;
  clean: boolean;
  auth: { header?: string; who: Who };
  headers: Record<string, string>;
  payload?: Payload;
}): Plan => {
  const headers = { ...parts.headers };
  if (parts.auth.header !== undefined) headers.authorization = parts.auth.header;
  if (parts.payload?.contentType !== undefined) headers['content-type'] = parts.payload.contentType;
  return printable({
    route: parts.route,
    method: parts.method,
    target: parts.target,
    clean: parts.clean,
    auth: parts.auth,
    headers,
    ...(parts.payload?.body === undefined ? {} : { body: parts.payload.body }),
    validBody: parts.payload?.validBody ?? false,
  });
};

export const writePlans: fc.Arbitrary<Plan> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .record({ auth: authorization, headers: extraHeaders, payload: payload(addBody) })
      .map((p) => request({ ...p, route: 'add', method: 'POST', target: '/v1/subscriptions', clean: true })),
  },
  {
    weight: 3,
    arbitrary: fc
      .record({
        auth: authorization,
        headers: extraHeaders,
        payload: payload(patchBody),
        segment: guidSegment,
      })
      .map(({ segment, ...p }) =>
        request({
          ...p,
          route: 'patch',
          method: 'PATCH',
          target: `/v1/subscriptions/${segment.text}`,
          clean: segment.clean,
        }),
      ),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({
        auth: authorization,
        headers: extraHeaders,
        segment: guidSegment,
        payload: fc.oneof(
          { weight: 6, arbitrary: fc.constant({ validBody: false }) },
          { weight: 1, arbitrary: payload(patchBody) },
        ),
      })
      .map(({ segment, ...p }) =>
        request({
          ...p,
          route: 'delete',
          method: 'DELETE',
          target: `/v1/subscriptions/${segment.text}`,
          clean: segment.clean,
        }),
      ),
  },
);

/** Bob never writes: his answers must show no data at all. */
const readAuth = fc.oneof(
  { weight: 5, arbitrary: authorization },
  { weight: 1, arbitrary: fc.constant({ header: 'Bearer {{bob-token}}', who: 'bob' as Who }) },
);
const readMethod = fc.constantFrom('GET', 'GET', 'GET', 'GET', 'HEAD');

export const readPlans: fc.Arbitrary<Plan> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .record({ auth: readAuth, headers: extraHeaders, query: queryString, method: readMethod })
      .map(({ query, ...p }) =>
        request({ ...p, route: 'list', target: `/v1/subscriptions${query}`, clean: true }),
      ),
  },
  {
    weight: 3,
    arbitrary: fc
      .record({
        auth: readAuth,
        headers: extraHeaders,
        segment: guidSegment,
        query: queryString,
        method: readMethod,
      })
      .map(({ segment, query, ...p }) =>
        request({
          ...p,
          route: 'get',
          target: `/v1/subscriptions/${segment.text}${query}`,
          clean: segment.clean,
        }),
      ),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({ auth: readAuth, headers: extraHeaders, segment: deletionSegment, method: readMethod })
      .map(({ segment, ...p }) =>
        request({ ...p, route: 'deletion', target: `/v1/deletions/${segment.text}`, clean: segment.clean }),
      ),
  },
);

export const authPlans: fc.Arbitrary<Plan> = fc.oneof(
  {
    weight: 1,
    arbitrary: fc
      .record({ auth: authorization, headers: extraHeaders, payload: payload(loginBody) })
      .map((p) => request({ ...p, route: 'login', method: 'POST', target: '/v1/auth/login', clean: true })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ auth: authorization, headers: extraHeaders, payload: payload(refreshBody) })
      .map((p) =>
        request({ ...p, route: 'refresh', method: 'POST', target: '/v1/auth/refresh', clean: true }),
      ),
  },
);

const unknownSegment = fc
  .oneof(
    fc.string({ unit: fc.constantFrom(...'abcxyz019-_.~%!$'), minLength: 1, maxLength: 12 }),
    nastyString.filter((s) => s.length > 0).map(percentEncode),
    fc.constantFrom(
      'V1',
      'Subscriptions',
      'v2',
      'subscription',
      'login',
      'refresh',
      'users',
      'admin',
      '.env',
      '%2e%2e',
      'index.html',
    ),
  )
  .filter((segment) => segment.length > 0);

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'];
const odd = ['PROPFIND', 'MKCOL', 'LOCK', 'SEARCH', 'REPORT', 'PURGE', 'QUERY', 'FOO', 'patch', 'get-x'];

export const unknownPlans: fc.Arbitrary<Plan> = fc
  .record({
    auth: authorization,
    headers: extraHeaders,
    method: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...METHODS) },
      { weight: 1, arbitrary: fc.constantFrom(...odd) },
    ),
    path: fc.oneof(
      fc.array(unknownSegment, { minLength: 1, maxLength: 4 }).map((segments) => `/${segments.join('/')}`),
      unknownSegment.map((s) => `/v1/${s}`),
      unknownSegment.map((s) => `/v1/auth/${s}`),
      fc.tuple(fc.uuid(), unknownSegment).map(([u, s]) => `/v1/subscriptions/${u}/${s}`),
      unknownSegment.map((s) => `/v1/deletions/1/${s}`),
      fc.constantFrom('/', '/v1', '/v1/', '/v1/auth', '/V1/subscriptions', '/v2/subscriptions'),
      fc.constantFrom(
        'PUT /v1/subscriptions',
        'DELETE /v1/subscriptions',
        'PATCH /v1/subscriptions',
        'POST /v1/subscriptions/{{known:0}}',
        'PUT /v1/subscriptions/{{known:0}}',
        'POST /v1/deletions/1',
        'DELETE /v1/deletions/1',
        'GET /v1/deletions',
        'GET /v1/auth/login',
        'PUT /v1/auth/refresh',
        'OPTIONS /v1/subscriptions',
      ),
    ),
    payload: fc.oneof(
      { weight: 3, arbitrary: fc.constant({ validBody: false }) },
      { weight: 1, arbitrary: payload(addBody) },
    ),
  })
  .map(({ method, path, ...p }) => {
    const fixed = /^([A-Z]+) (\/.*)$/.exec(path);
    return request({
      ...p,
      route: 'unknown',
      method: fixed ? fixed[1]! : method,
      target: fixed ? fixed[2]! : path,
      clean: true,
    });
  });

// ---------------------------------------------------------------------------------------------
// Raw HTTP/1.1 over a socket: what fetch refuses to send (bytes in header names and values,
// broken framing, odd request lines).

export const rawRequest: fc.Arbitrary<{ label: string; bytes: Buffer }> = (() => {
  const crlf = '\r\n';
  const garbageBytes = (max: number) =>
    fc
      .uint8Array({ minLength: 1, maxLength: max })
      .map((bytes) => Buffer.from(bytes.filter((b) => b !== 0x0a && b !== 0x0d)));
  const head = (lines: string[]) => Buffer.from(lines.join(crlf) + crlf + crlf, 'latin1');
  const build = (label: string, parts: (string | Buffer)[]) =>
    printable({
      label,
      bytes: Buffer.concat(
        parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'latin1') : part)),
      ),
    });
  const auth = 'Authorization: Bearer {{alice-token}}';
  return fc.oneof(
    fc
      .tuple(
        fc.constantFrom('X-Request-Id', 'Authorization', 'Content-Type', 'Accept', 'X-Anything'),
        garbageBytes(60),
      )
      .map(([name, value]) =>
        build(`${name} with bytes ${value.toString('hex')}`, [
          `GET /v1/subscriptions HTTP/1.1${crlf}Host: localhost${crlf}${name === 'Authorization' ? '' : auth + crlf}${name}: `,
          value,
          `${crlf}Connection: close${crlf}${crlf}`,
        ]),
      ),
    garbageBytes(30).map((name) =>
      build(`header name bytes ${name.toString('hex')}`, [
        `GET /v1/subscriptions HTTP/1.1${crlf}Host: localhost${crlf}${auth}${crlf}`,
        name,
        `: x${crlf}Connection: close${crlf}${crlf}`,
      ]),
    ),
    fc
      .tuple(fc.constantFrom('GET', 'POST', 'FOO', 'G\tET', 'get', ''), garbageBytes(80))
      .map(([method, target]) =>
        build(`request line ${method} ${target.toString('hex')}`, [
          `${method} /`,
          Buffer.from(target.filter((b) => b !== 0x20)),
          ` HTTP/1.1${crlf}Host: localhost${crlf}${auth}${crlf}Connection: close${crlf}${crlf}`,
        ]),
      ),
    fc.constantFrom(
      build('HTTP/1.0 without Host', [head(['GET /v1/subscriptions HTTP/1.0', auth])]),
      build('HTTP/1.1 without Host', [head(['GET /v1/subscriptions HTTP/1.1', auth, 'Connection: close'])]),
      build('HTTP/2.0 on HTTP/1', [
        head(['GET /v1/subscriptions HTTP/2.0', 'Host: x', auth, 'Connection: close']),
      ]),
      build('HTTP/9.9', [head(['GET /v1/subscriptions HTTP/9.9', 'Host: x', auth, 'Connection: close'])]),
      build('bare LF line ends', [
        Buffer.from(`GET /v1/subscriptions HTTP/1.1\nHost: x\n${auth}\nConnection: close\n\n`),
      ]),
      build('obs-fold', [
        head([
          'GET /v1/subscriptions HTTP/1.1',
          'Host: x',
          auth,
          'X-Request-Id: a',
          ' b',
          'Connection: close',
        ]),
      ]),
      build('conflicting Content-Length', [
        head([
          'POST /v1/subscriptions HTTP/1.1',
          'Host: x',
          auth,
          'Content-Type: application/json',
          'Content-Length: 2',
          'Content-Length: 3',
          'Connection: close',
        ]),
        '{}',
      ]),
      build('Content-Length not a number', [
        head([
          'POST /v1/subscriptions HTTP/1.1',
          'Host: x',
          auth,
          'Content-Type: application/json',
          'Content-Length: 2x',
          'Connection: close',
        ]),
        '{}',
      ]),
      build('Content-Length and Transfer-Encoding', [
        head([
          'POST /v1/subscriptions HTTP/1.1',
          'Host: x',
          auth,
          'Content-Type: application/json',
          'Content-Length: 5',
          'Transfer-Encoding: chunked',
          'Connection: close',
        ]),
        `2${crlf}{}${crlf}0${crlf}${crlf}`,
      ]),
      build('broken chunk size', [
        head([
          'POST /v1/subscriptions HTTP/1.1',
          'Host: x',
          auth,
          'Content-Type: application/json',
          'Transfer-Encoding: chunked',
          'Connection: close',
        ]),
        `zz${crlf}{}${crlf}0${crlf}${crlf}`,
      ]),
      build('unknown Transfer-Encoding', [
        head([
          'POST /v1/subscriptions HTTP/1.1',
          'Host: x',
          auth,
          'Content-Type: application/json',
          'Transfer-Encoding: gzip, chunked, x',
          'Connection: close',
        ]),
        `2${crlf}{}${crlf}0${crlf}${crlf}`,
      ]),
      build('chunked JSON body', [
        head([
          'POST /v1/subscriptions HTTP/1.1',
          'Host: x',
          auth,
          'Content-Type: application/json',
          'Transfer-Encoding: chunked',
          'Connection: close',
        ]),
        `1${crlf}{${crlf}1${crlf}}${crlf}0${crlf}${crlf}`,
      ]),
      build('gzip-encoded body that is not gzip', [
        head([
          'POST /v1/subscriptions HTTP/1.1',
          'Host: x',
          auth,
          'Content-Type: application/json',
          'Content-Encoding: gzip',
          'Content-Length: 2',
          'Connection: close',
        ]),
        '{}',
      ]),
      build('Expect: 100-continue', [
        head([
          'POST /v1/subscriptions HTTP/1.1',
          'Host: x',
          auth,
          'Content-Type: application/json',
          'Expect: 100-continue',
          'Content-Length: 2',
          'Connection: close',
        ]),
        '{}',
      ]),
      build('Expect: garbage', [
        head(['GET /v1/subscriptions HTTP/1.1', 'Host: x', auth, 'Expect: x-garbage', 'Connection: close']),
      ]),
      build('absolute-form target', [
        head(['GET http://127.0.0.1/v1/subscriptions HTTP/1.1', 'Host: x', auth, 'Connection: close']),
      ]),
      build('asterisk-form target', [head(['OPTIONS * HTTP/1.1', 'Host: x', 'Connection: close'])]),
      build('two Authorization headers', [
        head(['GET /v1/subscriptions HTTP/1.1', 'Host: x', auth, auth, 'Connection: close']),
      ]),
      build('Host with garbage', [
        head(['GET /v1/subscriptions HTTP/1.1', 'Host: a b:c:d@e', auth, 'Connection: close']),
      ]),
      build('Host: evil', [
        head([
          'GET /v1/subscriptions?page=2&per_page=1 HTTP/1.1',
          'Host: evil.example"><x',
          auth,
          'Connection: close',
        ]),
      ]),
      build('X-Forwarded-Host', [
        head([
          'GET /v1/subscriptions?page=2&per_page=1 HTTP/1.1',
          'Host: x',
          'X-Forwarded-Host: evil.example',
          'X-Forwarded-Proto: javascript',
          auth,
          'Connection: close',
        ]),
      ]),
    ),
  );
})();
