import { verifyReplay } from '@castlog/replay';
import * as fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { METHODS as STATUS_METHODS } from 'node:http';
import { connect } from 'node:net';
import { checkAgainstOpenApi, RecordedResponse } from '../support/openapi-check';
import { uniqueName } from '../support/databases';
import { CastlogUnderTest, EventLogKind, startCastlog, TestUser } from '../support/start-castlog';

/**
 * Property-based HTTP fuzzing of every route (fast-check). Each run sends one request built from
 * random and malformed parts — bodies (any JSON, wrong types for every field, deep nesting, huge
 * strings, random bytes, truncated JSON, bodies over the limit), paths (random, percent-encoded,
 * very long segments), query strings (random values, repeated keys, unicode) and headers
 * (Authorization variants, content types, X-Request-Id garbage) — and checks the answer:
 *
 * - an answer within 10 s, never a 5xx;
 * - every non-2xx answer is JSON `{"code": "<status>", "message": "<the contract's message>[: detail]"}`
 *   and nothing else; 401 carries WWW-Authenticate, 429 Retry-After;
 * - no stack trace or source path in any body; the answer's X-Request-Id is sane;
 * - the status is one the route can answer for that input (valid credentials never get 401, a user
 *   with no data never sees any, a structurally valid POST with valid credentials is a 200);
 * - answers of documented routes match the served /openapi.json.
 *
 * Raw HTTP/1.1 bytes over a socket cover what fetch refuses to send (control bytes in headers,
 * broken framing, odd request lines). Everything runs against the Kafka and the PostgreSQL log, with
 * the rate limit off; a last property fuzzes with every rate-limit bucket empty (429 unless refused
 * earlier).
 *
 * After the runs, the read model must equal a replay of the log (`verifyReplay`), and every
 * subscription of the fuzzed user must be reachable through GET, the list total being the row count.
 *
 * The seed is logged; replay a run with CASTLOG_FUZZ_SEED (and CASTLOG_FUZZ_PATH from a failure's
 * report). CASTLOG_FUZZ_RUNS scales the number of runs (default 1: about 2,500 requests).
 */

const TIMEOUT_MS = 10_000;
const BODY_LIMIT = 1024 * 1024;
const SCALE = Number(process.env.CASTLOG_FUZZ_RUNS ?? 1);
/** One seed for the whole file, logged, so any run can be replayed (fast-check also prints the seed
 * and path of a failure). */
const SEED = Number(process.env.CASTLOG_FUZZ_SEED ?? Date.now() % 2 ** 31);
const runs = (n: number) => Math.max(1, Math.round(n * SCALE));
const params = <T>(numRuns: number): fc.Parameters<T> => ({
  numRuns: runs(numRuns),
  seed: SEED,
  ...(process.env.CASTLOG_FUZZ_PATH ? { path: process.env.CASTLOG_FUZZ_PATH } : {}),
  // Shrinking re-sends requests: stop in time for fast-check, not jest, to report the failure and
  // its seed.
  interruptAfterTimeLimit: 200_000,
  markInterruptAsFailure: true,
});

/** The contract's message per status (CONTRACT.md); 413 and 429 are the service's own wording,
 * which the contract leaves open. A detail may follow after `: `. */
const MESSAGES: Readonly<Record<number, string>> = {
  401: 'User not authorized',
  404: 'Resource not found',
  405: 'Input could not be validated',
  410: 'Subscription has been deleted',
  413: 'Request body too large',
  429: 'Too many requests',
};

const STACK_TRACE = /\n\s+at \S[^\n]*:\d+:\d+|node_modules[\\/]|[\\/](?:apps|libs)[\\/][\w./\\-]+\.[jt]s\b/;
const SANE_REQUEST_ID = /^[\w.:-]{1,128}$/;

// ---------------------------------------------------------------------------------------------
// Plans: what a run sends, as plain data (so fast-check prints it), with placeholders for the
// values that only exist at run time (tokens, guids the user has, deletion ids).

type Who = 'alice' | 'bob' | 'none' | 'unsure';
type RouteName = 'add' | 'list' | 'get' | 'patch' | 'delete' | 'deletion' | 'login' | 'refresh' | 'unknown';

interface Plan {
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

interface World {
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
function materialize(text: string, world: World): string {
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
function describeValue(value: unknown): string {
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
const printable = <T extends object>(value: T): T =>
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

const JSON_TYPES = ['application/json', 'application/json; charset=utf-8'];
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

const writePlans: fc.Arbitrary<Plan> = fc.oneof(
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

const readPlans: fc.Arbitrary<Plan> = fc.oneof(
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

const authPlans: fc.Arbitrary<Plan> = fc.oneof(
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

const unknownPlans: fc.Arbitrary<Plan> = fc
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
// Oracle.

interface RouteRule {
  readonly method: string;
  readonly pattern: RegExp;
  readonly authenticated: boolean;
  readonly statuses: readonly number[];
}

const UUID_OR_ANY = '[^/]+';
const RULES: Readonly<Record<Exclude<RouteName, 'unknown'>, RouteRule>> = {
  add: { method: 'POST', pattern: /^\/v1\/subscriptions$/, authenticated: true, statuses: [200, 405] },
  list: { method: 'GET', pattern: /^\/v1\/subscriptions$/, authenticated: true, statuses: [200, 405] },
  get: {
    method: 'GET',
    pattern: new RegExp(`^/v1/subscriptions/${UUID_OR_ANY}$`),
    authenticated: true,
    statuses: [200, 404, 405, 410],
  },
  patch: {
    method: 'PATCH',
    pattern: new RegExp(`^/v1/subscriptions/${UUID_OR_ANY}$`),
    authenticated: true,
    statuses: [200, 404, 405, 410],
  },
  delete: {
    method: 'DELETE',
    pattern: new RegExp(`^/v1/subscriptions/${UUID_OR_ANY}$`),
    authenticated: true,
    statuses: [202, 404, 405],
  },
  deletion: {
    method: 'GET',
    pattern: new RegExp(`^/v1/deletions/${UUID_OR_ANY}$`),
    authenticated: true,
    statuses: [200, 404, 405],
  },
  login: { method: 'POST', pattern: /^\/v1\/auth\/login$/, authenticated: false, statuses: [200, 401, 405] },
  refresh: {
    method: 'POST',
    pattern: /^\/v1\/auth\/refresh$/,
    authenticated: false,
    statuses: [200, 401, 405],
  },
};

const decodes = (path: string) => {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
};

const safeDecode = (segment: string) => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

/** True when (method, path) is served by some route, after the URL parser's normalisation and the
 * router's percent-decoding — a generated "unknown" request that is not unknown is skipped. */
function isServed(method: string, pathname: string): boolean {
  const decoded = pathname.split('/').map(safeDecode).join('/');
  const first = decoded.split('/')[1] ?? '';
  if (['health', 'metrics', 'openapi.json', 'docs'].includes(first) || decoded.startsWith('/docs'))
    return true;
  const effective = method === 'HEAD' ? 'GET' : method;
  return Object.values(RULES).some(
    (rule) => rule.method === effective && (rule.pattern.test(pathname) || rule.pattern.test(decoded)),
  );
}

/** Node's limit on the request line and headers together; past it the request is refused (405). */
const MAX_HEADER_BYTES = 16 * 1024;

/** The statuses the plan may answer. */
function allowedStatuses(plan: Plan, bodyBytes: number, headBytes: number): Set<number> {
  const allowed = allowedByRoute(plan, bodyBytes);
  // Node's HTTP parser refuses methods it does not know and heads over its limit: a 405.
  if (!METHODS_NODE_PARSES.has(plan.method) || headBytes > MAX_HEADER_BYTES - 2_000) allowed.add(405);
  return allowed;
}

const METHODS_NODE_PARSES = new Set(STATUS_METHODS);

function allowedByRoute(plan: Plan, bodyBytes: number): Set<number> {
  // An empty body sent as JSON is refused (405) too.
  const carriesBody = plan.body !== undefined;
  if (plan.route === 'unknown') {
    const allowed = new Set([404]);
    // Fastify parses (and may refuse) a body, or asks for a content type on methods that carry
    // one (QUERY), before it finds no route.
    if (carriesBody || !['GET', 'HEAD', 'DELETE', 'OPTIONS'].includes(plan.method))
      [405, 413].forEach((s) => allowed.add(s));
    return allowed;
  }
  const rule = RULES[plan.route];
  // Past the body limit: 413, unless Fastify refuses the content type first, before it reads the
  // body (405).
  if (bodyBytes > BODY_LIMIT) {
    const type = plan.headers['content-type'];
    return new Set(type !== undefined && JSON_TYPES.includes(type) ? [413] : [413, 405]);
  }
  const allowed = new Set(rule.statuses);
  if (!plan.clean) allowed.add(404);
  if (rule.authenticated) {
    if (plan.auth.who === 'none') {
      // Fastify reads and parses the body before the credentials guard runs.
      const early = carriesBody ? [405] : [];
      return new Set([401, ...early, ...(plan.clean ? [] : [404])]);
    }
    if (plan.auth.who === 'unsure') allowed.add(401);
    if (plan.auth.who === 'bob') {
      // Bob has no subscriptions and no deletions.
      allowed.delete(410);
      if (plan.route !== 'list') allowed.delete(200);
    }
  }
  // A structurally valid body sent as JSON: a POST of alice's is added, alice's login succeeds.
  if (plan.validBody && ((plan.route === 'add' && plan.auth.who === 'alice') || plan.route === 'login'))
    return new Set([200]);
  return allowed;
}

// ---------------------------------------------------------------------------------------------
// Sending and checking.

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: unknown;
  readonly isJson: boolean;
  readonly ms: number;
}

class Unsendable extends Error {}

/** Sends the plan with fetch; Unsendable when the client itself refuses the request. */
async function send(
  baseUrl: string,
  plan: Plan,
  world: World,
): Promise<{ answer: Answer; sent: string; bytes: number }> {
  const target = materialize(plan.target, world);
  const url = new URL(`${baseUrl}${target}`);
  if (url.origin !== new URL(baseUrl).origin) throw new Error(`generator bug: ${target} leaves the service`);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(plan.headers)) headers[name] = materialize(value, world);
  const body = typeof plan.body === 'string' ? materialize(plan.body, world) : plan.body;
  const bytes = body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  let request: Request;
  try {
    request = new Request(url, {
      method: plan.method,
      headers,
      ...(body === undefined ? {} : { body }),
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    throw new Unsendable(String(error));
  }
  const started = Date.now();
  let response: Response;
  let raw: Buffer;
  try {
    response = await fetch(request);
    raw = Buffer.from(await response.arrayBuffer());
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    // undici checks some header values only when sending (e.g. control characters, cookies).
    if (cause?.code === 'UND_ERR_INVALID_ARG') throw new Unsendable(String(cause));
    throw new Error(
      `${plan.method} ${url.pathname.slice(0, 200)}: no answer after ${Date.now() - started} ms: ${String(error)}${cause ? ` (${String(cause)})` : ''}`,
    );
  }
  const text = raw.toString('utf8');
  let json: unknown;
  let isJson = false;
  try {
    json = JSON.parse(text);
    isJson = true;
  } catch {
    // not JSON
  }
  return {
    answer: {
      status: response.status,
      headers: response.headers,
      text,
      json,
      isJson,
      ms: Date.now() - started,
    },
    sent: `${plan.method} ${url.pathname.slice(0, 300)}${url.search.slice(0, 200)}`,
    bytes,
  };
}

/** The properties every answer must have; throws with a description otherwise. */
function checkAnswer(
  where: string,
  method: string,
  answer: Pick<Answer, 'status' | 'text' | 'json' | 'isJson'> & { header(name: string): string | null },
  sentRequestId?: string,
): void {
  const { status, text, json } = answer;
  const fail = (why: string) => {
    throw new Error(`${where} → ${status}: ${why}\nbody: ${text.slice(0, 500)}`);
  };
  if (status >= 500) fail('a 5xx answer');
  if (STACK_TRACE.test(text)) fail('a stack trace or source path in the body');
  const requestId = answer.header('x-request-id');
  if (requestId === null || !SANE_REQUEST_ID.test(requestId))
    fail(`X-Request-Id ${JSON.stringify(requestId)} is not sane`);
  if (sentRequestId !== undefined && SANE_REQUEST_ID.test(sentRequestId) && requestId !== sentRequestId)
    fail(`X-Request-Id ${requestId} instead of the sane one sent, ${sentRequestId}`);
  if (method === 'HEAD') {
    if (text.length > 0) fail('a body on HEAD');
    return;
  }
  const type = answer.header('content-type') ?? '';
  if (!/^application\/json\b/i.test(type)) fail(`content-type ${JSON.stringify(type)}, not JSON`);
  if (!answer.isJson) fail('the body is not JSON');
  if (status >= 200 && status < 300) return;
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    fail('the error body is not an object');
  const body = json as Record<string, unknown>;
  const keys = Object.keys(body).sort();
  if (keys.join(',') !== 'code,message')
    fail(`the error body has keys ${keys.join(',')}, not exactly code,message`);
  if (body.code !== String(status)) fail(`code ${JSON.stringify(body.code)} is not "${status}"`);
  const expected = MESSAGES[status];
  if (expected === undefined) fail(`status ${status} is not one the contract names`);
  const message = body.message;
  if (typeof message !== 'string' || !(message === expected || message.startsWith(`${expected}: `)))
    fail(`message ${JSON.stringify(message)} is not "${expected}" (with an optional ": detail")`);
  if (status === 401 && !answer.header('www-authenticate')) fail('401 without WWW-Authenticate');
  if (status === 429 && !(Number(answer.header('retry-after')) >= 1)) fail('429 without Retry-After');
}

/** Checks a route's own 2xx answer a bit further and learns guids, deletion ids and refresh tokens. */
function learn(plan: Plan, answer: Answer, world: World, where: string): void {
  if (plan.method === 'HEAD' || answer.status < 200 || answer.status >= 300) return;
  const body = answer.json as any;
  const fail = (why: string) => {
    throw new Error(`${where} → ${answer.status}: ${why}\nbody: ${answer.text.slice(0, 500)}`);
  };
  const remember = (guid: unknown) => {
    if (typeof guid === 'string' && plan.auth.who !== 'bob' && !world.knownGuids.includes(guid)) {
      world.knownGuids.push(guid);
      if (world.knownGuids.length > 300) world.knownGuids.shift();
    }
  };
  switch (plan.route) {
    case 'add':
      if (!Array.isArray(body?.success) || !Array.isArray(body?.failure))
        fail('success and failure must be arrays');
      body.success.forEach((item: any) => remember(item.guid));
      break;
    case 'patch':
      remember(body?.new_guid);
      break;
    case 'delete':
      if (!Number.isInteger(body?.deletion_id)) fail('no integer deletion_id');
      if (!world.deletionIds.includes(body.deletion_id)) world.deletionIds.push(body.deletion_id);
      break;
    case 'list':
      if (!Number.isInteger(body?.total) || !Array.isArray(body?.subscriptions))
        fail('no total or subscriptions');
      if (body.per_page > 100 || body.subscriptions.length > body.per_page) fail('more than per_page items');
      if (plan.auth.who === 'bob' && (body.total !== 0 || body.subscriptions.length !== 0))
        fail("another user's subscriptions are visible");
      break;
    case 'login':
    case 'refresh':
      if (typeof body?.refresh_token !== 'string' || body?.token_type !== 'Bearer')
        fail('not a token answer');
      world.refreshToken = body.refresh_token;
      break;
    default:
      break;
  }
}

/** Sends the plan (skipping it when the client refuses to, or when an "unknown" route is served
 * after all), checks the properties every answer has, and that its status is one `statuses`
 * allows. */
async function sendAndCheck(
  baseUrl: string,
  world: World,
  plan: Plan,
  statuses: (plan: Plan, bodyBytes: number, headBytes: number) => Set<number>,
): Promise<{ answer: Answer; target: string; where: string } | undefined> {
  const target = materialize(plan.target, world);
  const { pathname } = new URL(`${baseUrl}${target}`);
  if (plan.route === 'unknown') fc.pre(!isServed(plan.method, pathname));
  let result;
  try {
    result = await send(baseUrl, plan, world);
  } catch (error) {
    if (!(error instanceof Unsendable)) throw error;
    fc.pre(false);
    return undefined;
  }
  const { answer, sent, bytes } = result;
  const where = `${sent} (${plan.auth.who}, ${bytes} body bytes, ${answer.ms} ms)`;
  const headBytes = Object.entries(plan.headers).reduce(
    (sum, [name, value]) => sum + name.length + materialize(value, world).length + 4,
    target.length + 20,
  );
  const refusedUnread = headBytes > MAX_HEADER_BYTES - 2_000 || !METHODS_NODE_PARSES.has(plan.method);
  checkAnswer(
    where,
    plan.method,
    { ...answer, header: (name) => answer.headers.get(name) },
    // A head Node's parser refuses (over its limit, an unknown method) is never read: no id to echo.
    plan.headers['x-request-id'] === undefined || refusedUnread
      ? undefined
      : materialize(plan.headers['x-request-id'], world),
  );
  const allowed = statuses(plan, bytes, headBytes);
  // The router refuses a path that does not percent-decode, or a path parameter over Fastify's
  // maxParamLength (100), before credentials, rate limit or the body limit: 405, whatever the route.
  if (!decodes(pathname) || pathname.split('/').some((segment) => segment.length > 100)) allowed.add(405);
  if (!allowed.has(answer.status))
    throw new Error(
      `${where} → ${answer.status}, expected one of ${[...allowed].join(', ')}\nbody: ${answer.text.slice(0, 500)}`,
    );
  return { answer, target, where };
}

/** With every bucket empty: what the rate limit lets through unanswered by a 429 — requests
 * refused before the limit is consulted (the router, Node's parser, the body parser, and
 * credentials: failed authentication is not rate-limited). */
function allowedWhenLimited(plan: Plan, _bodyBytes: number, headBytes: number): Set<number> {
  const allowed = new Set<number>();
  if (!METHODS_NODE_PARSES.has(plan.method) || headBytes > MAX_HEADER_BYTES - 2_000) allowed.add(405);
  if (plan.body !== undefined) [405, 413].forEach((status) => allowed.add(status));
  if (!plan.clean) allowed.add(404);
  const authenticated = plan.route !== 'login' && plan.route !== 'refresh';
  if (authenticated && plan.auth.who !== 'alice') allowed.add(401);
  // Limited: per address on the auth routes, per user, and per address once credentials have failed.
  if (!authenticated || plan.auth.who !== 'none' || plan.auth.header !== undefined) allowed.add(429);
  return allowed;
}

// ---------------------------------------------------------------------------------------------
// Raw HTTP/1.1 over a socket: what fetch refuses to send (bytes in header names and values,
// broken framing, odd request lines).

const rawRequest: fc.Arbitrary<{ label: string; bytes: Buffer }> = (() => {
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

interface RawAnswer {
  status: number;
  headers: Map<string, string>;
  text: string;
}

/** Reads one HTTP/1.x answer (after any 100 Continue) from the bytes; undefined while incomplete. */
function parseRaw(all: Buffer, closed: boolean): RawAnswer | undefined {
  const response = all.toString('latin1').replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');
  const end = response.indexOf('\r\n\r\n');
  const statusLine = /^HTTP\/1\.[01] (\d{3})/.exec(response);
  if (end < 0 || !statusLine) return undefined;
  const headers = new Map<string, string>();
  for (const line of response.slice(0, end).split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const body = Buffer.from(response.slice(end + 4), 'latin1');
  const length = headers.get('content-length');
  if (length === undefined ? !closed : body.length < Number(length)) return undefined;
  const text = (length === undefined ? body : body.subarray(0, Number(length))).toString('utf8');
  return { status: Number(statusLine[1]), headers, text };
}

/** Writes the bytes to a fresh connection and reads one answer. When nothing comes back for a
 * while (the request may look unfinished to the server), ends the sending side. */
function sendRaw(port: number, bytes: Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const chunks: Buffer[] = [];
    const finish = (error?: Error, answer?: RawAnswer) => {
      clearTimeout(quiet);
      clearTimeout(timer);
      socket.destroy();
      if (answer) resolve(answer);
      else reject(error);
    };
    const quiet = setTimeout(() => chunks.length === 0 && socket.end(), 2_000);
    const timer = setTimeout(() => finish(new Error(`no answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      const answer = parseRaw(Buffer.concat(chunks), false);
      if (answer) finish(undefined, answer);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const all = Buffer.concat(chunks);
      const answer = parseRaw(all, true);
      finish(
        new Error(
          `no HTTP answer before the connection closed, got ${JSON.stringify(all.toString('latin1').slice(0, 200))}`,
        ),
        answer,
      );
    });
    socket.write(bytes);
  });
}

// ---------------------------------------------------------------------------------------------

beforeAll(() => console.log(`fuzz seed ${SEED} (replay with CASTLOG_FUZZ_SEED=${SEED})`));

describe.each<EventLogKind>(['kafka', 'postgres'])('HTTP fuzzing (%s log)', (log) => {
  let app: CastlogUnderTest;
  let world: World;
  const recorded: RecordedResponse[] = [];
  const counts = new Map<string, number>();
  let requests = 0;

  beforeAll(async () => {
    // A stuck projection shows as a 503 within the per-request timeout, not as a hang.
    app = await startCastlog({ log, env: { READ_YOUR_WRITES_TIMEOUT: '8s' } });
    const [alice, bob] = [await app.freshUser(), await app.freshUser()];
    const seeded = await app.as(alice).post('/v1/subscriptions', {
      subscriptions: Array.from({ length: 6 }, (_, i) => ({
        feed_url: `https://seed${i}.example.com/rss`,
        guid: randomUUID(),
      })),
    });
    expect(seeded.status).toBe(200);
    const login = await app.anonymous.post('/v1/auth/login', {
      username: alice.name,
      password: alice.password,
    });
    expect(login.status).toBe(200);
    world = {
      alice,
      bob,
      refreshToken: login.body.refresh_token,
      knownGuids: seeded.body.success.map((item: { guid: string }) => item.guid),
      deletionIds: [],
    };
  });

  afterAll(async () => {
    const summary = [...counts].sort().map(([key, n]) => `${key}: ${n}`);
    console.log(`fuzz (${log} log): ${requests} requests\n${summary.join('\n')}`);
    await app?.close();
  });

  /** Sends one plan, checks every property, learns from the answer. */
  const exercise = async (plan: Plan) => {
    const sent = await sendAndCheck(app.url, world, plan, allowedStatuses);
    if (!sent) return;
    const { answer, target, where } = sent;
    requests += 1;
    const key = `${plan.route} ${plan.method} ${answer.status}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    learn(plan, answer, world, where);
    if (plan.method !== 'HEAD' && answer.status !== 413)
      recorded.push({ method: plan.method, path: target, status: answer.status, body: answer.json });
  };

  it('writes: POST /v1/subscriptions, PATCH and DELETE /v1/subscriptions/{guid}', async () => {
    await fc.assert(fc.asyncProperty(writePlans, exercise), params(400));
  }, 240_000);

  it('reads: GET (and HEAD) /v1/subscriptions, /v1/subscriptions/{guid}, /v1/deletions/{id}', async () => {
    await fc.assert(fc.asyncProperty(readPlans, exercise), params(400));
  }, 240_000);

  it('tokens: POST /v1/auth/login and /v1/auth/refresh', async () => {
    await fc.assert(fc.asyncProperty(authPlans, exercise), params(100));
  }, 240_000);

  it('unknown routes and methods', async () => {
    await fc.assert(fc.asyncProperty(unknownPlans, exercise), params(200));
  }, 240_000);

  it('raw HTTP/1.1 requests a fetch client would refuse', async () => {
    const port = Number(new URL(app.url).port);
    await fc.assert(
      fc.asyncProperty(rawRequest, async ({ label, bytes }) => {
        const answer = await sendRaw(
          port,
          Buffer.from(materialize(bytes.toString('latin1'), world), 'latin1'),
        );
        requests += 1;
        const json = (() => {
          try {
            return { json: JSON.parse(answer.text) as unknown, isJson: true };
          } catch {
            return { json: undefined, isJson: false };
          }
        })();
        checkAnswer(`raw ${label}`, 'GET', {
          status: answer.status,
          text: answer.text,
          ...json,
          header: (name) => answer.headers.get(name) ?? null,
        });
      }),
      params(100),
    );
  }, 240_000);

  it('leaves a read model equal to a replay of the log, every subscription reachable', async () => {
    const { dataSource, schema } = app.runtime.database;
    await app.until('every deletion finalized and logged', async () => {
      const [row] = await dataSource.query(
        `SELECT (SELECT count(*) FROM "${schema}".deletions WHERE status = 'PENDING')::int
              + (SELECT count(*) FROM "${schema}".deletion_saga WHERE NOT logged)::int AS open`,
      );
      return row.open === 0;
    });
    const differences = await verifyReplay({
      dataSource,
      eventLog: app.runtime.eventLog,
      schema: uniqueName('scratch'),
      liveSchema: schema,
    });
    expect(differences.map((d) => JSON.stringify(d).slice(0, 1000))).toEqual([]);

    // Every subscription the fuzzed user has is listed once, the list's total is the row count, and
    // every guid it has had resolves through GET. (Plain fetch: the stored feed_urls may have an
    // upper-case scheme, which test/support/openapi-check's "url" format refuses.)
    const get = async (path: string) => {
      const response = await fetch(new URL(path, app.url), {
        headers: { authorization: `Bearer ${world.alice.token}` },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    const rows: { id: string; deleted: boolean; merged: boolean }[] = await dataSource.query(
      `SELECT id, deleted IS NOT NULL AS deleted, merged_into IS NOT NULL AS merged
         FROM "${schema}".subscriptions WHERE user_id = $1`,
      [world.alice.id],
    );
    expect(rows.length).toBeGreaterThan(0);
    const listed: string[] = [];
    for (let page = 1; ; page += 1) {
      const { status, body } = await get(`/v1/subscriptions?per_page=100&page=${page}`);
      expect(status).toBe(200);
      expect(body.total).toBe(rows.length);
      listed.push(...body.subscriptions.map((item: { guid: string }) => item.guid));
      if (!body.next) break;
    }
    expect(listed.sort()).toEqual(rows.map((row) => row.id).sort());
    const guids: { guid: string; deleted: boolean; merged: boolean }[] = await dataSource.query(
      `SELECT g.guid, s.deleted IS NOT NULL AS deleted, s.merged_into IS NOT NULL AS merged
         FROM "${schema}".subscription_guids g
         JOIN "${schema}".subscriptions s ON s.user_id = g.user_id AND s.id = g.subscription_id
        WHERE g.user_id = $1`,
      [world.alice.id],
    );
    const unreachable: string[] = [];
    for (let i = 0; i < guids.length; i += 20) {
      await Promise.all(
        guids.slice(i, i + 20).map(async ({ guid, deleted, merged }) => {
          const { status, body } = await get(`/v1/subscriptions/${guid}`);
          // A merged subscription answers as the one it was merged into, deleted or not.
          const expected = merged ? [200, 410] : [deleted ? 410 : 200];
          if (!expected.includes(status) || (status === 200 && body.guid !== guid))
            unreachable.push(`${guid} → ${status} ${JSON.stringify(body)}`);
        }),
      );
    }
    expect(unreachable).toEqual([]);

    // The fuzzed answers of documented routes match the served OpenAPI document (schemes written in
    // lower case first: the support check's "url" format is case-sensitive, URL schemes are not).
    const document = await (await fetch(new URL('/openapi.json', app.url))).json();
    const lowerSchemes = (value: unknown): unknown =>
      value === undefined
        ? undefined
        : JSON.parse(JSON.stringify(value).replace(/"(https?):\/\//gi, (all) => all.toLowerCase()));
    const answers = recorded.map((answer) => ({ ...answer, body: lowerSchemes(answer.body) }));
    expect(checkAgainstOpenApi(document as Parameters<typeof checkAgainstOpenApi>[0], answers)).toEqual([]);
  }, 180_000);
});

describe('HTTP fuzzing with every rate-limit bucket empty', () => {
  let app: CastlogUnderTest;
  let world: World;

  beforeAll(async () => {
    // One request a minute per user and per client address: each takes its one request below.
    app = await startCastlog({ log: 'postgres', env: { RATE_LIMIT_PER_MINUTE: '1' } });
    const [alice, bob] = [await app.freshUser(), await app.freshUser()];
    const seeded = await app.as(alice).post('/v1/subscriptions', {
      subscriptions: [{ feed_url: 'https://limited.example.com/rss', guid: randomUUID() }],
    });
    expect(seeded.status).toBe(200);
    expect((await app.as(bob).get('/v1/subscriptions')).status).toBe(200);
    const login = await app.anonymous.post('/v1/auth/login', {
      username: alice.name,
      password: alice.password,
    });
    expect(login.status).toBe(200);
    world = {
      alice,
      bob,
      refreshToken: login.body.refresh_token,
      knownGuids: seeded.body.success.map((item: { guid: string }) => item.guid),
      deletionIds: [],
    };
  });
  afterAll(() => app?.close());

  it('answers 429 with Retry-After and the error body, unless the request is refused before the limit', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(writePlans, readPlans, authPlans), async (plan) => {
        await sendAndCheck(app.url, world, plan, allowedWhenLimited);
      }),
      params(80),
    );
  }, 240_000);
});
