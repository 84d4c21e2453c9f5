import { UPLOAD_BODY_LIMIT_BYTES } from '@castlog/config';
import {
  checkFeedUrl,
  conflictingUrl,
  DEVICE_TYPES,
  EPISODE_ACTION_KINDS,
  isDeviceId,
} from '@castlog/domain';
import * as fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import type { TestUser } from '../support/start-castlog';
import type { SyncDraftRoute } from './sync-draft';

/**
 * What the HTTP fuzzing (test/e2e/fuzz.e2e-spec.ts) sends: plans, as plain data with placeholders
 * for the values that only exist at run time, and the fast-check arbitraries that generate them —
 * for every route, for unknown routes, and as raw HTTP/1.1 bytes.
 */

/** The service's body limit (BODY_LIMIT_BYTES' default). */
export const BODY_LIMIT = 1024 * 1024;

/** The body limit of gpodder.net's upload routes, above BODY_LIMIT. */
export const UPLOAD_BODY_LIMIT = UPLOAD_BODY_LIMIT_BYTES;

// ---------------------------------------------------------------------------------------------
// Plans: what a run sends, as plain data (so fast-check prints it), with placeholders for the
// values that only exist at run time (tokens, guids the user has, deletion ids).

export type Who = 'alice' | 'bob' | 'carol' | 'none' | 'unsure';
export type RouteName =
  | 'add'
  | 'list'
  | 'get'
  | 'patch'
  | 'delete'
  | 'deletion'
  | 'login'
  | 'refresh'
  | 'unknown'
  | GpodderRoute
  | SyncDraftRoute;

/** The gpodder.net face's routes (CONTRACT.md, "gpodder.net API (v2) on the same log"). */
export type GpodderRoute =
  | 'gp-login'
  | 'gp-logout'
  | 'gp-devices'
  | 'gp-device'
  | 'gp-subscriptions'
  | 'gp-upload'
  | 'gp-sync'
  | 'gp-sync-post'
  | 'gp-episodes'
  | 'gp-episodes-post'
  | 'gp-settings'
  | 'gp-settings-post'
  | 'simple-get'
  | 'simple-put';

/** How the route judges the path, query and body it is sent: `valid` answers 2xx, `invalid` 400,
 * `unsure` where the contract leaves either open. */
export type Validity = 'valid' | 'invalid' | 'unsure';

/** What a gpodder.net route's 2xx body is: JSON, nothing (gpodder.net's empty 200), or the simple
 * API's JSONP, OPML, text or podcast XML. */
export type Answering = 'json' | 'empty' | 'jsonp' | 'opml' | 'txt' | 'xml';

/** A feed URL as the gpodder.net face reads it: without the white space Python's `str.strip()`
 * strips (JavaScript's `\s`, less nothing Python keeps but U+FEFF, which castlog strips too, plus
 * U+001C–U+001F and U+0085), written out apart from the service's own loop. */
const GPODDER_SPACE = '[\\s\\u001c-\\u001f\\u0085]';
const AROUND = new RegExp(`^${GPODDER_SPACE}+|${GPODDER_SPACE}+$`, 'g');
export const trimLikeGpodder = <T>(url: T): T | string =>
  typeof url === 'string' ? url.replace(AROUND, '') : url;

/** White space gpodder.net trims from around a feed URL, as clients leave it there. */
export const URL_SPACE = fc.constantFrom(
  ' ',
  '  ',
  '\t',
  '\n',
  '\r\n',
  '\u00a0',
  '\u3000',
  '\u2028',
  '\u0085',
  '\u001f',
);

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
  /** gpodder.net routes: whose name the path carries — the authenticated user's, another user's,
   * or a name nobody has. */
  readonly pathUser?: 'own' | 'other' | 'nobody';
  /** gpodder.net routes: how the route judges the device, query and body. */
  readonly input?: Validity;
  /** gpodder.net routes: what a 2xx body is. */
  readonly answering?: Answering;
}

export interface World {
  alice: TestUser;
  bob: TestUser;
  /** Written only through the gpodder.net face, against a model (test/fuzz/gpodder-model.ts). */
  carol: TestUser;
  refreshToken: string;
  knownGuids: string[];
  deletionIds: number[];
  /** Alice's latest gpodder.net session (the service keeps a user's newest sessions only). */
  aliceSession: string;
  /** The sync draft's face: Alice's sync_ids, the action_ids she has sent, the cursors its pages
   * gave (GET /api/v1/sync's `since`, GET /api/v1/subscriptions'), and her refresh token from
   * /auth/login. */
  syncIds: string[];
  actionIds: string[];
  syncCursors: string[];
  listCursors: string[];
  draftRefreshToken: string;
}

/** Percent-encodes every byte of the text's UTF-8 (lone surrogates become U+FFFD). */
export const percentEncode = (text: string) =>
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
        case 'bob-name':
          return world.bob.name;
        case 'carol-name':
          return world.carol.name;
        case 'carol-basic':
          return `Basic ${Buffer.from(`${world.carol.name}:${world.carol.password}`).toString('base64')}`;
        case 'carol-token':
          return world.carol.token;
        case 'alice-session':
          return world.aliceSession;
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
        case 'sync-id':
          return at(world.syncIds) ?? randomUUID();
        case 'sync-id-upper':
          return (at(world.syncIds) ?? randomUUID()).toUpperCase();
        case 'action-id':
          return at(world.actionIds) ?? randomUUID();
        case 'sync-cursor':
          return at(world.syncCursors) ?? new Date().toISOString();
        case 'list-cursor':
          return at(world.listCursors) ?? randomUUID();
        case 'draft-refresh-token':
          return world.draftRefreshToken;
        // An instant this many seconds before or after the machine's clock (the service's).
        case 'ago':
          return new Date(Date.now() - Number(index ?? 0) * 1000).toISOString();
        case 'ahead':
          return new Date(Date.now() + Number(index ?? 0) * 1000).toISOString();
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
export const headerGarbage = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: latin1, maxLength: 80 }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.oneof(latin1, control), minLength: 1, maxLength: 20 }) },
  { weight: 1, arbitrary: fc.integer({ min: 200, max: 20_000 }).map((n) => 'r'.repeat(n)) },
);

/** Strings with the characters that break things: NUL, lone surrogates, BOM, RTL override, quotes. */
export const nastyString = fc.oneof(
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

export const anyJson = fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' });

/** Values of the wrong type for any field. */
export const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(anyJson, { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), anyJson, { maxKeys: 3 }),
  fc.constant(Number.MAX_SAFE_INTEGER),
  fc.constant(-0),
);

export const feedUrl: fc.Arbitrary<unknown> = fc.oneof(
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
      '\thttps://fuzz6.example.com/feed.xml\r\n',
      '\u00a0HTTPS://FUZZ7.example.com:443/feed.xml\u3000',
      ' \t ',
      '\u200bhttps://fuzz.example.com/zero-width',
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

export const guidValue: fc.Arbitrary<unknown> = fc.oneof(
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
export const withExtras = <T extends Record<string, unknown>>(object: fc.Arbitrary<T>) =>
  fc
    .tuple(object, fc.dictionary(fc.string({ unit: 'binary', maxLength: 8 }), anyJson, { maxKeys: 2 }))
    .map(([fields, extras]) => ({ ...extras, ...fields }));

export interface JsonBody {
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

export const credential = fc.oneof(
  { weight: 3, arbitrary: fc.constant('{{alice-name}}') },
  { weight: 2, arbitrary: fc.constant('{{alice-password}}') },
  { weight: 3, arbitrary: nastyString },
  { weight: 1, arbitrary: wrongType },
);

/** A login body, for `/v1/auth/login` and the sync draft's `/auth/login` alike. */
export const loginBody: fc.Arbitrary<JsonBody> = fc.oneof(
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
export function storable(value: unknown, depth = 0): boolean {
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
export const contentType = fc.oneof(
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
export const payload = (json: fc.Arbitrary<JsonBody>): fc.Arbitrary<Payload> =>
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

export const authorization: fc.Arbitrary<{ header?: string; who: Who }> = fc.oneof(
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
export const extraHeaders: fc.Arbitrary<Record<string, string>> = fc
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

export const request = (parts: {
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
export const readAuth = fc.oneof(
  { weight: 5, arbitrary: authorization },
  { weight: 1, arbitrary: fc.constant({ header: 'Bearer {{bob-token}}', who: 'bob' as Who }) },
);
export const readMethod = fc.constantFrom('GET', 'GET', 'GET', 'GET', 'HEAD');

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

// ---------------------------------------------------------------------------------------------
// The gpodder.net face: /api/2/… and the simple API. Each plan says whose name its path carries
// (`pathUser`), how the route judges its device, query and body (`input`), and what a 2xx body is
// (`answering`). Bodies are read by their content whatever the Content-Type says, so the content
// types are the ones real clients send (and some garbage, which leaves the answer open).

const DEVICE_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-';

/** The segment as the router hands it over, percent-decoded where it decodes. */
const decoded = (segment: string) => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

/** A device id segment (the id, before `.json`): `valid` when the contract's pattern holds, `clean`
 * when the router sees it as one segment. */
interface DeviceSegment {
  readonly text: string;
  readonly valid: boolean;
  readonly clean: boolean;
}

const deviceSegment: fc.Arbitrary<DeviceSegment> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .constantFrom(
        'phone',
        'laptop',
        'desktop-1',
        'antennapod_on_pixel_7',
        'kasts-host',
        'a.b',
        'A_B-c.9',
        '_',
        '.',
        '..',
      )
      .map((text) => ({ text, valid: true, clean: true })),
  },
  {
    weight: 3,
    arbitrary: fc
      .string({ unit: fc.constantFrom(...DEVICE_CHARS), minLength: 1, maxLength: 64 })
      .map((text) => ({ text, valid: true, clean: true })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom('d'.repeat(65), 'with space', 'ünï', 'a:b', 'a@b', 'a!b', '🎙️', 'a+b', "a'b", 'a,b', '~x')
      .map((text) => ({ text: encodeURIComponent(text), valid: false, clean: true })),
  },
  {
    weight: 1,
    arbitrary: fc
      .oneof(
        fc.constantFrom('', '%', '%zz', '%2F', 'a%2Fb', '%00', 'a?b', 'a#b', 'a/b'),
        fc.integer({ min: 90, max: 20_000 }).map((n) => 'd'.repeat(n)),
        nastyString.map(percentEncode),
      )
      .map((text) => ({ text, valid: isDeviceId(decoded(text)), clean: false })),
  },
);

interface UserSegment {
  readonly text: string;
  readonly kind: 'own' | 'other' | 'nobody';
  readonly clean: boolean;
}

/** The path's user for credentials of `who`. */
const userSegment = (who: Who): fc.Arbitrary<UserSegment> => {
  const own = who === 'bob' ? '{{bob-name}}' : who === 'carol' ? '{{carol-name}}' : '{{alice-name}}';
  const other = who === 'bob' ? '{{alice-name}}' : '{{bob-name}}';
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant({ text: own, kind: 'own' as const, clean: true }) },
    { weight: 1, arbitrary: fc.constant({ text: other, kind: 'other' as const, clean: true }) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('nobody', 'ALICE', 'admin', 'a%20b', 'x'.repeat(129), '%C3%A9')
        .map((text) => ({ text, kind: 'nobody' as const, clean: true })),
    },
    {
      weight: 1,
      arbitrary: fc
        .oneof(fc.constantFrom('', '%', '%2F', '..', 'a%2Fb'), nastyString.map(percentEncode))
        .map((text) => ({ text, kind: 'nobody' as const, clean: false })),
    },
  );
};

/** The worse of validities. */
export const judged = (...all: Validity[]): Validity =>
  all.includes('invalid') ? 'invalid' : all.includes('unsure') ? 'unsure' : 'valid';

/** `since`: absent or a non-negative integer is fine; `since=` and integers past 2^53 are left
 * open; anything else is 400. */
const sinceValue: fc.Arbitrary<{ text?: string; validity: Validity }> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ validity: 'valid' as Validity }) },
  {
    weight: 6,
    arbitrary: fc
      .oneof(
        fc.constantFrom(0, 1, 1_600_000_000, 4_102_444_800),
        fc.integer({ min: 0, max: 2_000_000_000 }),
        fc.constant(Math.floor(Date.now() / 1000)),
      )
      .map((n) => ({ text: String(n), validity: 'valid' as Validity })),
  },
  {
    weight: 3,
    arbitrary: fc
      .constantFrom(
        '-1',
        '1.5',
        'abc',
        '1e3',
        '0x10',
        ' 1',
        '+1',
        'NaN',
        '١٢',
        '2023-02-23T14:00:00Z',
        '%00',
        '1,2',
      )
      .map((text) => ({ text, validity: 'invalid' as Validity })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('', '00001', '99999999999999999999', '9007199254740993')
      .map((text) => ({ text, validity: 'unsure' as Validity })),
  },
);

const query = (pairs: [string, string | undefined][]) => {
  const kept = pairs.filter((pair): pair is [string, string] => pair[1] !== undefined);
  return kept.length === 0 ? '' : `?${new URLSearchParams(kept).toString()}`;
};

/** What a client may send as the body's Content-Type: JSON, urllib's default, text, none. Only the
 * garbage leaves the answer open (the framework may refuse it before the route reads the body). */
const gpodderContentType: fc.Arbitrary<{ type?: string; sure: boolean }> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc
      .constantFrom(
        'application/json',
        'application/json; charset=utf-8',
        'application/x-www-form-urlencoded',
        'text/plain',
        'plain/text; charset=utf-8',
        'text/plain; charset=utf-8',
      )
      .map((type) => ({ type, sure: true })),
  },
  { weight: 2, arbitrary: fc.constant({ sure: true }) },
  {
    weight: 1,
    arbitrary: fc
      .oneof(
        fc.constantFrom('application/json; charset=utf-16', 'multipart/form-data; boundary=x', 'json', ''),
        headerGarbage,
      )
      .map((type) => ({ type, sure: false })),
  },
);

interface GpBody {
  readonly text?: string | Uint8Array;
  readonly validity: Validity;
}

/** Any JSON value sent as a gpodder body, judged by `judge`; sometimes cut short, nested deep, bytes. */
const gpodderBody = (
  json: fc.Arbitrary<unknown>,
  judge: (value: unknown) => Validity,
): fc.Arbitrary<GpBody> =>
  fc.oneof(
    {
      weight: 20,
      arbitrary: fc.tuple(json, fc.constantFrom('compact', 'android', 'python')).map(([value, style]) => ({
        text:
          style === 'android'
            ? JSON.stringify(value).replace(/\//g, '\\/')
            : style === 'python'
              ? JSON.stringify(value, null, 1).replace(/\n */g, ' ')
              : JSON.stringify(value),
        validity: storable(value) ? judge(value) : judged(judge(value), 'unsure'),
      })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(json, fc.nat()).map(([value, cut]) => {
        const text = JSON.stringify(value);
        const kept = text.slice(0, cut % Math.max(1, text.length));
        return { text: kept, validity: kept === text ? judge(value) : ('unsure' as Validity) };
      }),
    },
    { weight: 1, arbitrary: deepJson.map((text) => ({ text, validity: 'invalid' as Validity })) },
    {
      weight: 1,
      arbitrary: fc
        .uint8Array({ maxLength: 200 })
        .map((bytes) => ({ text: bytes, validity: 'unsure' as Validity })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          'null',
          'true',
          '1e999',
          '"x"',
          '{"__proto__":{"polluted":1}}',
          'NaN',
          "{'add':[]}",
          '[]garbage',
        )
        .map((text) => ({ text, validity: 'invalid' as Validity })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom('', ' ').map((text) => ({ text, validity: 'unsure' as Validity })),
    },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 1, max: 64 * 1024 }).map((extra) => ({
        // Over the limit of every gpodder.net route, its uploads' included.
        text: `{"add":["https://big.example/${'x'.repeat(UPLOAD_BODY_LIMIT + extra)}"],"remove":[]}`,
        validity: 'invalid' as Validity,
      })),
    },
  );

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const extraKeys = (value: Record<string, unknown>, known: string[]) =>
  Object.keys(value).some((key) => !known.includes(key));

/** `{add:[url], remove:[url]}`: lists of strings, no URL in both (CONTRACT: 400). */
export function uploadValidity(value: unknown): Validity {
  if (!isObject(value)) return 'invalid';
  const { add, remove } = value;
  if ((add !== undefined && !Array.isArray(add)) || (remove !== undefined && !Array.isArray(remove)))
    return 'invalid';
  const lists = [add ?? [], remove ?? []] as unknown[][];
  // One URL in both lists once trimmed of white space refuses the upload.
  if (conflictingUrl(lists[0]!.map(trimLikeGpodder), lists[1]!.map(trimLikeGpodder)) !== undefined)
    return 'invalid';
  if (add === undefined || remove === undefined || extraKeys(value, ['add', 'remove'])) return 'unsure';
  if (lists.some((list) => list.some((url) => typeof url !== 'string'))) return 'unsure';
  return lists[0]!.length + lists[1]!.length > 1000 ? 'unsure' : 'valid';
}

/** Episode actions: a list of `{podcast, episode, action, timestamp?, device?, guid?, started?,
 * position?, total?}` with a known action, a device id of the pattern, play fields integers. */
export function actionsValidity(value: unknown): Validity {
  if (!Array.isArray(value)) return 'invalid';
  const each = value.map((action): Validity => {
    if (!isObject(action)) return 'invalid';
    const { podcast, episode, timestamp, device, guid } = action;
    const kind = typeof action.action === 'string' ? action.action.toLowerCase() : undefined;
    if (!(EPISODE_ACTION_KINDS as readonly unknown[]).includes(kind)) return 'invalid';
    // Decision left open by the contract: an action in another case (`PLAY`).
    if (kind !== action.action) return 'unsure';
    if (typeof podcast !== 'string' || typeof episode !== 'string') return 'invalid';
    // A podcast URL of white space only is empty once trimmed.
    if (trimLikeGpodder(podcast) === '') return 'invalid';
    if (device !== undefined && !isDeviceId(device)) return 'invalid';
    if (timestamp !== undefined && typeof timestamp !== 'string') return 'invalid';
    if (guid !== undefined && typeof guid !== 'string') return 'unsure';
    const plays = ['started', 'position', 'total'].map((field) => action[field]);
    if (action.action === 'play' && plays.some((n) => n !== undefined && !Number.isSafeInteger(n)))
      return 'invalid';
    const clean =
      podcast !== '' &&
      episode !== '' &&
      (timestamp === undefined || /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(timestamp)) &&
      plays.every((n) => n === undefined || (action.action === 'play' && (n as number) >= 0)) &&
      !extraKeys(action, [
        'podcast',
        'episode',
        'action',
        'timestamp',
        'device',
        'guid',
        'started',
        'position',
        'total',
      ]);
    return clean ? 'valid' : 'unsure';
  });
  return value.length > 1000 ? judged(...each, 'unsure') : judged(...each);
}

/** `{caption?, type?}` with a known type. */
export function deviceValidity(value: unknown): Validity {
  if (!isObject(value)) return 'invalid';
  const { caption, type } = value;
  if (caption !== undefined && typeof caption !== 'string') return 'invalid';
  if (type !== undefined && !(DEVICE_TYPES as readonly unknown[]).includes(type)) return 'invalid';
  return caption === '' || extraKeys(value, ['caption', 'type']) ? 'unsure' : 'valid';
}

const episodeTimestamp = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .date({ min: new Date(0), max: new Date(4_102_444_800_000), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 19)),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '2024-01-01T10:00:00Z',
      '2024-01-01T10:00:00.5',
      '2024-13-01T10:00:00',
      '2024-01-01',
      'yesterday',
      '',
    ),
  },
  { weight: 1, arbitrary: wrongType },
);

const playField = fc.oneof(
  { weight: 6, arbitrary: fc.nat(100_000) },
  { weight: 1, arbitrary: fc.constantFrom(-1, 1.5, 2 ** 53, '12', null) },
);

const action = withExtras(
  fc.record(
    {
      podcast: fc.oneof({ weight: 6, arbitrary: plausibleFeedUrl }, { weight: 1, arbitrary: feedUrl }),
      episode: fc.oneof(
        { weight: 6, arbitrary: plausibleFeedUrl.map((url) => `${url}#episode`) },
        { weight: 1, arbitrary: nastyString },
        { weight: 1, arbitrary: wrongType },
      ),
      action: fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom(...EPISODE_ACTION_KINDS) },
        { weight: 1, arbitrary: fc.constantFrom('flattr', 'PLAY', 'Play', '', 'stream') },
        { weight: 1, arbitrary: wrongType },
      ),
      timestamp: episodeTimestamp,
      device: fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom('phone', 'laptop', 'kasts-host') },
        { weight: 1, arbitrary: fc.constantFrom('bad device', 'd'.repeat(65), '', 'ü') },
        { weight: 1, arbitrary: wrongType },
      ),
      guid: fc.oneof(fc.string({ maxLength: 20 }), wrongType),
      started: playField,
      position: playField,
      total: playField,
    },
    { requiredKeys: [] },
  ),
);

const actionsJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 8, arbitrary: fc.array(action, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.array(fc.oneof(wrongType, action), { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.oneof(anyJson, fc.record({ actions: fc.array(action, { maxLength: 2 }) })) },
);

const uploadJson: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      { add: fc.array(feedUrl, { maxLength: 5 }), remove: fc.array(feedUrl, { maxLength: 3 }) },
      { requiredKeys: [] },
    ),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      add: fc.array(plausibleFeedUrl, { maxLength: 4 }),
      remove: fc.array(plausibleFeedUrl, { maxLength: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(999, 1001).map((n) => ({
      add: Array.from({ length: n }, (_, i) => `https://gp-bulk${i % 40}.example.com/feed`),
      remove: [],
    })),
  },
  {
    weight: 1,
    arbitrary: withExtras(fc.record({ add: wrongType, remove: wrongType }, { requiredKeys: [] })),
  },
  { weight: 1, arbitrary: anyJson },
);

const deviceJson: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      {
        caption: fc.oneof(fc.string({ maxLength: 40 }), nastyString),
        type: fc.constantFrom(...DEVICE_TYPES),
      },
      { requiredKeys: [] },
    ),
  },
  {
    weight: 2,
    arbitrary: withExtras(
      fc.record(
        {
          caption: fc.oneof(fc.string(), wrongType),
          type: fc.oneof(fc.constantFrom('phone', 'Mobile', ''), wrongType),
        },
        { requiredKeys: [] },
      ),
    ),
  },
  { weight: 1, arbitrary: anyJson },
);

const syncJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({
    synchronize: fc.array(fc.array(fc.constantFrom('phone', 'laptop', 'x'), { maxLength: 3 }), {
      maxLength: 2,
    }),
    'stop-synchronize': fc.array(fc.constantFrom('phone', 'laptop'), { maxLength: 2 }),
  }),
  anyJson,
);

/** The setting keys a valid change sets or removes: too few for a scope ever to hold more than a
 * scope may (100), so a change of these keys alone answers 200. */
export const SETTING_KEYS = ['public_subscriptions', 'auto_flattr', 'is_favorite', 'x', '10', 'clé', 'a.b'];
const settingValue = fc.oneof(
  { weight: 8, arbitrary: anyJson },
  { weight: 1, arbitrary: fc.integer({ min: 16_300, max: 17_000 }).map((n) => 'v'.repeat(n)) },
);
const settingsJson: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      {
        set: fc.dictionary(fc.constantFrom(...SETTING_KEYS), settingValue, { maxKeys: 4 }),
        remove: fc.array(fc.constantFrom(...SETTING_KEYS), { maxLength: 3 }),
      },
      { requiredKeys: [] },
    ),
  },
  {
    weight: 2,
    arbitrary: withExtras(
      fc.record(
        {
          set: fc.oneof(
            fc.dictionary(fc.oneof(nastyString, fc.string()), anyJson, { maxKeys: 4 }),
            wrongType,
          ),
          remove: fc.oneof(fc.array(fc.oneof(nastyString, wrongType), { maxLength: 3 }), wrongType),
        },
        { requiredKeys: [] },
      ),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(101, 150).map((n) => ({
      set: Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])),
    })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(101, 300)
      .map((n) => ({ remove: Array.from({ length: n }, (_, i) => `k${i}`) })),
  },
  { weight: 1, arbitrary: fc.constantFrom(256, 2000).map((n) => ({ set: { ['k'.repeat(n)]: 1 } })) },
  { weight: 1, arbitrary: anyJson },
);

/** A setting key the service takes: a string of 1 to 255 characters (code points), not `__proto__`. */
const settingKeyOk = (key: unknown) =>
  typeof key === 'string' && key !== '' && key !== '__proto__' && [...key].length <= 255;

/** `{set: {key: any JSON}, remove: [key]}`, either left out: at most 100 keys in each, keys of 1 to
 * 255 characters, values of at most 16 KiB of JSON. Valid only with SETTING_KEYS (others may fill a
 * scope, whose 101st key is refused). */
export function settingsValidity(value: unknown): Validity {
  if (!isObject(value)) return 'invalid';
  const { set = {}, remove = [] } = value;
  if (!isObject(set) || !Array.isArray(remove)) return 'invalid';
  const entries = Object.entries(set);
  if (entries.length > 100 || remove.length > 100) return 'invalid';
  if (![...entries.map(([key]) => key), ...remove].every(settingKeyOk)) return 'invalid';
  if (entries.some(([, item]) => Buffer.byteLength(JSON.stringify(item)) > 16 * 1024)) return 'invalid';
  return [...entries.map(([key]) => key), ...remove].every((key) => SETTING_KEYS.includes(key as string))
    ? 'valid'
    : 'unsure';
}

type ScopeName = 'account' | 'device' | 'podcast' | 'episode';

/** A settings scope's path and query: the scope (sometimes one that is no route), its parameters
 * given once, left out, repeated or invalid, and parameters it does not take (ignored). */
const settingsTarget: fc.Arbitrary<{ rest: string; clean: boolean; validity: Validity }> = fc
  .record({
    scope: fc.oneof(
      { weight: 12, arbitrary: fc.constantFrom<ScopeName>('account', 'device', 'podcast', 'episode') },
      { weight: 1, arbitrary: fc.constantFrom('user', 'Account', 'devices', 'account.json', '') },
    ),
    device: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('phone', 'laptop', 'a.b', '_', 'A_B-c.9') },
      { weight: 1, arbitrary: fc.constantFrom('', 'with space', 'd'.repeat(65), 'ünï', 'a/b') },
    ),
    podcast: fc.oneof(
      { weight: 6, arbitrary: plausibleFeedUrl },
      { weight: 1, arbitrary: fc.constantFrom('', 'x'.repeat(2049)) },
      { weight: 1, arbitrary: nastyString },
    ),
    episode: fc.oneof(
      { weight: 6, arbitrary: plausibleFeedUrl.map((url) => `${url}#episode`) },
      { weight: 1, arbitrary: fc.constantFrom('', 'e'.repeat(2049)) },
    ),
    given: fc.constantFrom('once', 'once', 'once', 'once', 'once', 'missing', 'twice'),
  })
  .map(({ scope, device, podcast, episode, given }) => {
    const pairs: [string, string][] = [];
    const param = (name: string, text: string) => {
      if (given !== 'missing') pairs.push([name, text]);
      if (given === 'twice') pairs.push([name, text]);
    };
    const urlValidity = (text: string): Validity =>
      text === '' || text.length > 2048 ? 'invalid' : storable(text) ? 'valid' : 'unsure';
    let validity: Validity = given === 'once' ? 'valid' : 'invalid';
    switch (scope) {
      case 'account':
        // Parameters it does not take are ignored, however often given.
        pairs.push(['device', device]);
        validity = 'valid';
        break;
      case 'device':
        param('device', device);
        if (!isDeviceId(device)) validity = 'invalid';
        break;
      case 'podcast':
        param('podcast', podcast);
        validity = judged(validity, urlValidity(podcast));
        break;
      case 'episode':
        param('podcast', podcast);
        param('episode', episode);
        validity = judged(validity, urlValidity(podcast), urlValidity(episode));
        break;
      default:
        validity = 'unsure';
    }
    const known = ['account', 'device', 'podcast', 'episode'].includes(scope);
    return { rest: `/${scope}.json${query(pairs)}`, clean: known, validity };
  });

/** Feed URLs for simple-API lists, and a list written in the path's format. */
const simpleList = fc.array(
  fc.oneof(
    { weight: 6, arbitrary: plausibleFeedUrl },
    {
      weight: 1,
      arbitrary: fc
        .tuple(URL_SPACE, fc.nat(20), URL_SPACE)
        .map(([before, n, after]) => `${before}https://fuzz${n}.example.com/feed.xml${after}`),
    },
    { weight: 1, arbitrary: fc.constantFrom('ftp://x.example/feed', 'no-scheme.example.com/feed', '') },
  ),
  { maxLength: 6 },
);
const xmlEscape = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const opmlOf = (urls: readonly string[]) =>
  `<?xml version="1.0" encoding="utf-8"?>\n<opml version="2.0"><head><title>fuzz</title></head><body>${urls
    .map((url) => `<outline type="rss" text="f" xmlUrl="${xmlEscape(url)}"/>`)
    .join('')}</body></opml>`;

/** A device's list's formats; the user's list has `xml` too. */
type Format = 'json' | 'jsonp' | 'opml' | 'txt';
const DEVICE_FORMATS: readonly string[] = ['json', 'jsonp', 'opml', 'txt'];
const USER_FORMATS: readonly string[] = [...DEVICE_FORMATS, 'xml'];
/** Formats served; formats no list has (400 "Invalid format", whatever the device: the router
 * splits the segment at its last dot); and extensions the router splits elsewhere (`.json.json` is
 * the format `json` of a device or user ending in `.json`; `phone.` has an empty format). */
const INVALID_FORMATS = ['JSON', 'html', 'yaml', 'xml2'];
const FORMAT = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('json', 'jsonp', 'opml', 'txt', 'xml') },
  { weight: 2, arbitrary: fc.constantFrom(...INVALID_FORMATS) },
  { weight: 1, arbitrary: fc.constantFrom('json.json', 'opml.bak', '') },
);

/** How the route judges `{device}.{format}` (`device` undefined: the user's list): a format of the
 * list's by the device's pattern; another without a dot is 400 "Invalid format" whatever the
 * device; the rest is left open. */
const routedList = (device: DeviceSegment | undefined, format: string): Validity => {
  const formats = device === undefined ? USER_FORMATS : DEVICE_FORMATS;
  if (formats.includes(format)) return device === undefined || device.valid ? 'valid' : 'invalid';
  return format === '' || format.includes('.') ? 'unsure' : 'invalid';
};

/** The router places the path where the plan means it: a clean device, and a format it splits off
 * whole. */
const routedClean = (device: DeviceSegment | undefined, format: string): boolean =>
  (device?.clean ?? true) && routedList(device, format) !== 'unsure';

/** The `jsonp` query of a JSONP list: a callback of the contract's pattern (valid), or one that is
 * missing, too long, or carries script (400). */
const jsonpQuery: fc.Arbitrary<{ text: string; validity: Validity }> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .constantFrom('cb', 'jQuery.cb_1', '$', '_x$9', 'a'.repeat(64))
      .map((callback) => ({ text: `?jsonp=${callback}`, validity: 'valid' as Validity })),
  },
  {
    weight: 3,
    arbitrary: fc
      .oneof(
        fc.constantFrom(
          '',
          '?jsonp=',
          '?jsonp=alert(1)//',
          '?jsonp=%3Cscript%3E',
          `?jsonp=${'a'.repeat(200)}`,
          `?jsonp=${'a'.repeat(65)}`,
          '?jsonp=1cb',
          '?jsonp=cb%0A',
          '?jsonp=a&jsonp=b',
          '?callback=cb',
        ),
        nastyString.map((text) => `?jsonp=${percentEncode(text)}`),
      )
      .map((text) => ({ text, validity: 'invalid' as Validity })),
  },
);

/** What a simple-API GET answers in `format`. */
const simpleAnswering = (format: string): Answering =>
  format === 'opml' || format === 'txt' || format === 'jsonp' || format === 'xml' ? format : 'json';

/** A simple-API PUT body for the format: a well-formed list (valid), or garbage. */
const simpleBody = (format: string): fc.Arbitrary<GpBody> => {
  const judgeUrls = (urls: unknown[]): Validity =>
    urls.every((url) => typeof url === 'string' && checkFeedUrl(trimLikeGpodder(url)).ok)
      ? 'valid'
      : 'unsure';
  switch (format) {
    case 'json':
    case 'jsonp':
      return fc.oneof(
        {
          weight: 6,
          arbitrary: simpleList.map((urls) => ({ text: JSON.stringify(urls), validity: judgeUrls(urls) })),
        },
        {
          weight: 1,
          arbitrary: gpodderBody(anyJson, (value) => (Array.isArray(value) ? 'unsure' : 'invalid')),
        },
      );
    case 'txt':
      return fc.oneof(
        {
          weight: 6,
          arbitrary: simpleList.map((urls) => ({
            text: urls
              .filter((url) => url !== '')
              .map((url) => `${url}\n`)
              .join(''),
            // A line break in a URL's white space makes lines of its own: blank ones are skipped.
            validity: judgeUrls(urls.filter((url) => trimLikeGpodder(url) !== '')),
          })),
        },
        {
          weight: 1,
          arbitrary: fc
            .string({ unit: 'binary', maxLength: 200 })
            .map((text) => ({ text, validity: 'unsure' as Validity })),
        },
      );
    case 'opml':
      return fc.oneof(
        {
          weight: 6,
          arbitrary: simpleList.map((urls) => ({
            text: opmlOf(urls.filter((url) => url !== '')),
            // An outline whose xmlUrl is white space only is no feed.
            validity: judgeUrls(urls.filter((url) => trimLikeGpodder(url) !== '')),
          })),
        },
        {
          weight: 1,
          arbitrary: fc
            .constantFrom(
              '',
              'not xml',
              '<opml>',
              '<?xml version="1.0"?><rss/>',
              '<opml version="2.0"><body><outline xmlUrl="&bogus;"/></body></opml>',
            )
            .map((text) => ({ text, validity: 'unsure' as Validity })),
        },
      );
    default:
      return gpodderBody(simpleList, () => 'unsure');
  }
};

/** The credentials of a gpodder.net plan: those of the /v1 plans, the session cookie, a session
 * sent as a Bearer token (never accepted), and Bob's. */
const gpodderAuth = (
  withSession: boolean,
  withBob = false,
): fc.Arbitrary<{ header?: string; cookie?: string; who: Who }> =>
  fc.oneof(
    { weight: 12, arbitrary: authorization },
    ...(withSession
      ? [
          {
            weight: 4,
            arbitrary: fc.constant({ cookie: 'sessionid={{alice-session}}', who: 'alice' as Who }),
          },
        ]
      : []),
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        { header: 'Bearer {{alice-session}}', who: 'none' as Who },
        { cookie: 'sessionid=not-a-session', who: 'none' as Who },
        { cookie: 'sessionid=', who: 'none' as Who },
        { cookie: 'sessionid="{{alice-token}}"', who: 'none' as Who },
      ),
    },
    // Bob only reads: his answers must show no data at all.
    ...(withBob
      ? [{ weight: 2, arbitrary: fc.constant({ header: 'Bearer {{bob-token}}', who: 'bob' as Who }) }]
      : []),
  );

interface GpodderParts {
  readonly route: GpodderRoute;
  readonly method: string;
  readonly auth: { header?: string; cookie?: string; who: Who };
  readonly headers: Record<string, string>;
  readonly user: UserSegment;
  /** The rest of the path after the user, and whether the router sees what the plan means. */
  readonly rest: string;
  readonly clean: boolean;
  readonly validity: Validity;
  readonly answering: Answering;
  readonly body?: GpBody;
  readonly contentType?: { type?: string; sure: boolean };
}

const gpodderRequest = (parts: GpodderParts): Plan => {
  const headers = { ...parts.headers };
  if (parts.auth.header !== undefined) headers.authorization = parts.auth.header;
  if (parts.auth.cookie !== undefined) headers.cookie = parts.auth.cookie;
  if (parts.body !== undefined && parts.contentType?.type !== undefined)
    headers['content-type'] = parts.contentType.type;
  const input = judged(
    parts.validity,
    parts.body?.validity ?? 'valid',
    parts.contentType?.sure === false ? 'unsure' : 'valid',
  );
  const prefix: Record<GpodderRoute, string> = {
    'gp-login': '/api/2/auth/',
    'gp-logout': '/api/2/auth/',
    'gp-devices': '/api/2/devices/',
    'gp-device': '/api/2/devices/',
    'gp-subscriptions': '/api/2/subscriptions/',
    'gp-upload': '/api/2/subscriptions/',
    'gp-sync': '/api/2/sync-devices/',
    'gp-sync-post': '/api/2/sync-devices/',
    'gp-episodes': '/api/2/episodes/',
    'gp-episodes-post': '/api/2/episodes/',
    'gp-settings': '/api/2/settings/',
    'gp-settings-post': '/api/2/settings/',
    'simple-get': '/subscriptions/',
    'simple-put': '/subscriptions/',
  };
  return printable({
    route: parts.route,
    method: parts.method,
    target: `${prefix[parts.route]}${parts.user.text}${parts.rest}`,
    clean: parts.clean && parts.user.clean,
    auth: { ...(parts.auth.header === undefined ? {} : { header: parts.auth.header }), who: parts.auth.who },
    headers,
    ...(parts.body?.text === undefined ? {} : { body: parts.body.text }),
    validBody: false,
    pathUser: parts.user.kind,
    input,
    answering: parts.answering,
  });
};

/** A plan's parts drawn for its credentials: the user segment follows the credentials' user. */
const withUser = <T>(
  auth: fc.Arbitrary<{ header?: string; cookie?: string; who: Who }>,
  rest: (who: Who) => fc.Arbitrary<T>,
) =>
  auth.chain((credentials) =>
    fc.tuple(fc.constant(credentials), userSegment(credentials.who), rest(credentials.who), extraHeaders),
  );

const gpMethod = (method: string) =>
  method === 'GET' ? fc.constantFrom('GET', 'GET', 'GET', 'GET', 'HEAD') : fc.constant(method);

/** Requests to the gpodder.net face; `withSession` adds Alice's session cookie to the credentials. */
export const gpodderPlansFor = (withSession: boolean): fc.Arbitrary<Plan> =>
  fc.oneof(
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          withUser(gpodderAuth(withSession), () => gpodderBody(anyJson, () => 'valid')),
          gpodderContentType,
          fc.boolean(),
        )
        .map(([[auth, user, body, headers], contentType, withBody]) =>
          gpodderRequest({
            route: 'gp-login',
            method: 'POST',
            auth,
            headers,
            user,
            rest: '/login.json',
            clean: true,
            validity: 'valid',
            answering: 'json',
            ...(withBody
              ? {
                  body: {
                    text: body.text ?? '',
                    validity: body.validity === 'invalid' ? 'unsure' : body.validity,
                  },
                  contentType,
                }
              : {}),
          }),
        ),
    },
    {
      weight: 1,
      arbitrary: withUser(gpodderAuth(false), () => fc.constant(null)).map(([auth, user, , headers]) =>
        gpodderRequest({
          route: 'gp-logout',
          method: 'POST',
          auth,
          headers,
          user,
          rest: '/logout.json',
          clean: true,
          validity: 'valid',
          answering: 'json',
        }),
      ),
    },
    {
      weight: 2,
      arbitrary: withUser(gpodderAuth(withSession, true), () => gpMethod('GET')).map(
        ([auth, user, method, headers]) =>
          gpodderRequest({
            route: 'gp-devices',
            method,
            auth,
            headers,
            user,
            rest: '.json',
            clean: true,
            validity: 'valid',
            answering: 'json',
          }),
      ),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          withUser(gpodderAuth(withSession), () =>
            fc.tuple(deviceSegment, gpodderBody(deviceJson, deviceValidity)),
          ),
          gpodderContentType,
        )
        .map(([[auth, user, [device, body], headers], contentType]) =>
          gpodderRequest({
            route: 'gp-device',
            method: 'POST',
            auth,
            headers,
            user,
            rest: `/${device.text}.json`,
            clean: device.clean,
            validity: device.valid ? 'valid' : 'invalid',
            answering: 'empty',
            body,
            contentType,
          }),
        ),
    },
    {
      weight: 4,
      arbitrary: withUser(gpodderAuth(withSession, true), () =>
        fc.tuple(deviceSegment, sinceValue, gpMethod('GET')),
      ).map(([auth, user, [device, since, method], headers]) =>
        gpodderRequest({
          route: 'gp-subscriptions',
          method,
          auth,
          headers,
          user,
          rest: `/${device.text}.json${query([['since', since.text]])}`,
          clean: device.clean,
          validity: judged(device.valid ? 'valid' : 'invalid', since.validity),
          answering: 'json',
        }),
      ),
    },
    {
      weight: 5,
      arbitrary: fc
        .tuple(
          withUser(gpodderAuth(withSession), () =>
            fc.tuple(deviceSegment, gpodderBody(uploadJson, uploadValidity)),
          ),
          gpodderContentType,
        )
        .map(([[auth, user, [device, body], headers], contentType]) =>
          gpodderRequest({
            route: 'gp-upload',
            method: 'POST',
            auth,
            headers,
            user,
            rest: `/${device.text}.json`,
            clean: device.clean,
            validity: device.valid ? 'valid' : 'invalid',
            answering: 'json',
            body,
            contentType,
          }),
        ),
    },
    {
      weight: 1,
      arbitrary: withUser(gpodderAuth(withSession, true), () => gpMethod('GET')).map(
        ([auth, user, method, headers]) =>
          gpodderRequest({
            route: 'gp-sync',
            method,
            auth,
            headers,
            user,
            rest: '.json',
            clean: true,
            validity: 'valid',
            answering: 'json',
          }),
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          withUser(gpodderAuth(withSession), () => gpodderBody(syncJson, () => 'unsure')),
          gpodderContentType,
        )
        .map(([[auth, user, body, headers], contentType]) =>
          gpodderRequest({
            route: 'gp-sync-post',
            method: 'POST',
            auth,
            headers,
            user,
            rest: '.json',
            clean: true,
            validity: 'valid',
            answering: 'json',
            body,
            contentType,
          }),
        ),
    },
    {
      weight: 3,
      arbitrary: withUser(gpodderAuth(withSession, true), () =>
        fc.tuple(
          sinceValue,
          fc.option(fc.oneof(plausibleFeedUrl, nastyString), { nil: undefined }),
          fc.option(
            fc.oneof(
              deviceSegment
                .filter((d) => d.valid)
                .map((d) => ({ text: d.text, validity: 'unsure' as Validity })),
              fc.constantFrom({ text: 'bad device', validity: 'unsure' as Validity }),
            ),
            { nil: undefined },
          ),
          fc.option(fc.constantFrom('true', 'false', '1', 'yes', ''), { nil: undefined }),
          gpMethod('GET'),
        ),
      ).map(([auth, user, [since, podcast, device, aggregated, method], headers]) =>
        gpodderRequest({
          route: 'gp-episodes',
          method,
          auth,
          headers,
          user,
          rest: `.json${query([
            ['since', since.text],
            ['podcast', podcast],
            ['device', device?.text],
            ['aggregated', aggregated],
          ])}`,
          clean: true,
          validity: judged(
            since.validity,
            device?.validity ?? 'valid',
            aggregated === undefined || aggregated === 'true' || aggregated === 'false' ? 'valid' : 'unsure',
            podcast !== undefined && !storable(podcast) ? 'unsure' : 'valid',
          ),
          answering: 'json',
        }),
      ),
    },
    {
      weight: 4,
      arbitrary: fc
        .tuple(
          withUser(gpodderAuth(withSession), () => gpodderBody(actionsJson, actionsValidity)),
          gpodderContentType,
        )
        .map(([[auth, user, body, headers], contentType]) =>
          gpodderRequest({
            route: 'gp-episodes-post',
            method: 'POST',
            auth,
            headers,
            user,
            rest: '.json',
            clean: true,
            validity: 'valid',
            answering: 'json',
            body,
            contentType,
          }),
        ),
    },
    {
      weight: 3,
      arbitrary: withUser(gpodderAuth(withSession, true), () =>
        fc.tuple(fc.option(deviceSegment, { nil: undefined }), FORMAT, gpMethod('GET'), jsonpQuery),
      ).map(([auth, user, [device, format, method, jsonp], headers]) =>
        gpodderRequest({
          route: 'simple-get',
          method,
          auth,
          headers,
          user,
          rest: `${device === undefined ? '' : `/${device.text}`}.${format}${format === 'jsonp' ? jsonp.text : ''}`,
          clean: routedClean(device, format),
          validity: judged(routedList(device, format), format === 'jsonp' ? jsonp.validity : 'valid'),
          answering: simpleAnswering(format),
        }),
      ),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          withUser(gpodderAuth(withSession), () =>
            fc
              .tuple(deviceSegment, FORMAT)
              .chain(([device, format]) =>
                fc.tuple(fc.constant(device), fc.constant(format), simpleBody(format)),
              ),
          ),
          gpodderContentType,
        )
        .map(([[auth, user, [device, format, body], headers], contentType]) =>
          gpodderRequest({
            route: 'simple-put',
            method: 'PUT',
            auth,
            headers,
            user,
            rest: `/${device.text}.${format}`,
            clean: routedClean(device, format),
            validity: routedList(device, format),
            answering: 'empty',
            body,
            contentType,
          }),
        ),
    },
    {
      weight: 3,
      arbitrary: withUser(gpodderAuth(withSession, true), () =>
        fc.tuple(settingsTarget, gpMethod('GET')),
      ).map(([auth, user, [target, method], headers]) =>
        gpodderRequest({
          route: 'gp-settings',
          method,
          auth,
          headers,
          user,
          rest: target.rest,
          clean: target.clean,
          validity: target.validity,
          answering: 'json',
        }),
      ),
    },
    {
      weight: 4,
      arbitrary: fc
        .tuple(
          withUser(gpodderAuth(withSession), () =>
            fc.tuple(settingsTarget, gpodderBody(settingsJson, settingsValidity)),
          ),
          gpodderContentType,
        )
        .map(([[auth, user, [target, body], headers], contentType]) =>
          gpodderRequest({
            route: 'gp-settings-post',
            method: 'POST',
            auth,
            headers,
            user,
            rest: target.rest,
            clean: target.clean,
            validity: target.validity,
            answering: 'json',
            body,
            contentType,
          }),
        ),
    },
  );

export const gpodderPlans = gpodderPlansFor(true);

// ---------------------------------------------------------------------------------------------
// Carol: written only through the gpodder.net face, from a small pool of feeds in several
// spellings (and URLs the OPA rules refuse), so that test/fuzz/gpodder-model.ts can say exactly
// what her subscription list is after each request.

const CAROL_FEEDS = 8;
/** The same feed as a client may spell it: as stored, host upper-cased, default port, fragment. */
const carolFeed = fc
  .tuple(
    fc.nat(CAROL_FEEDS - 1),
    fc.constantFrom('plain', 'upper', 'port', 'fragment', 'spaced'),
    URL_SPACE,
    URL_SPACE,
  )
  .map(([n, spelling, before, after]) => {
    const url = `https://carol${n}.example.com/feed-${n}.xml`;
    switch (spelling) {
      case 'spaced':
        return `${before}${url}${after}`;
      case 'upper':
        return url.replace(`https://carol${n}.example.com`, `HTTPS://CAROL${n}.Example.COM`);
      case 'port':
        return url.replace('.example.com/', '.example.com:443/');
      case 'fragment':
        return `${url}#latest`;
      default:
        return url;
    }
  });
const carolUrl = fc.oneof(
  { weight: 10, arbitrary: carolFeed },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'ftp://carol.example.com/feed',
      'carol.example.com/no-scheme',
      'http://',
      `https://carol.example.com/${'x'.repeat(2050)}`,
    ),
  },
);

/** One of Carol's requests, valid or a refused conflict, as real clients send it. */
export const carolPlans: fc.Arbitrary<Plan> = fc.oneof(
  {
    weight: 7,
    arbitrary: fc
      .record({
        add: fc.array(carolUrl, { maxLength: 4 }),
        remove: fc.array(carolUrl, { maxLength: 3 }),
        device: fc.constantFrom('phone', 'laptop', 'tablet'),
        style: fc.constantFrom('compact', 'android', 'python'),
        auth: fc.constantFrom('Basic', 'Bearer', 'Bearer', 'Bearer'),
        contentType: fc.constantFrom(
          'application/json',
          'application/x-www-form-urlencoded',
          'application/json; charset=utf-8',
        ),
      })
      .map(({ add, remove, device, style, auth, contentType }) => {
        const value = { add, remove };
        const text =
          style === 'android'
            ? JSON.stringify(value).replace(/\//g, '\\/')
            : style === 'python'
              ? JSON.stringify(value, null, 1).replace(/\n */g, ' ')
              : JSON.stringify(value);
        return gpodderRequest({
          route: 'gp-upload',
          method: 'POST',
          auth: { header: auth === 'Basic' ? '{{carol-basic}}' : 'Bearer {{carol-token}}', who: 'carol' },
          headers: {},
          user: { text: '{{carol-name}}', kind: 'own', clean: true },
          rest: `/${device}.json`,
          clean: true,
          validity: 'valid',
          answering: 'json',
          body: { text, validity: uploadValidity(value) },
          contentType: { type: contentType, sure: true },
        });
      }),
  },
  {
    weight: 3,
    arbitrary: fc
      .record({
        urls: fc.array(
          carolUrl.filter((url) => !url.includes('x'.repeat(100))),
          { maxLength: 5 },
        ),
        format: fc.constantFrom<Format>('json', 'json', 'jsonp', 'txt', 'opml'),
        device: fc.constantFrom('phone', 'laptop'),
        basic: fc.boolean(),
      })
      .map(({ urls, format, device, basic }) =>
        gpodderRequest({
          route: 'simple-put',
          method: 'PUT',
          auth: { header: basic ? '{{carol-basic}}' : 'Bearer {{carol-token}}', who: 'carol' },
          headers: {},
          user: { text: '{{carol-name}}', kind: 'own', clean: true },
          rest: `/${device}.${format}`,
          clean: true,
          validity: 'valid',
          answering: 'empty',
          body: {
            text:
              format === 'json' || format === 'jsonp'
                ? JSON.stringify(urls)
                : format === 'opml'
                  ? opmlOf(urls)
                  : urls.map((url) => `${url}\n`).join(''),
            validity: urls.every((url) => checkFeedUrl(trimLikeGpodder(url)).ok) ? 'valid' : 'unsure',
          },
          contentType: {
            type:
              format === 'json' || format === 'jsonp'
                ? 'application/json'
                : format === 'opml'
                  ? 'text/x-opml'
                  : 'text/plain',
            sure: true,
          },
        }),
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
        'GET /api/2',
        'GET /api/2/devices',
        'GET /api/2/subscriptions/{{alice-name}}.json',
        'GET /api/2/episodes/{{alice-name}}',
        'GET /api/1/devices/{{alice-name}}.json',
        'GET /api/2/devices/{{alice-name}}/phone/x.json',
        'GET /api/2/auth/{{alice-name}}/login.json',
        'DELETE /api/2/devices/{{alice-name}}/phone.json',
        'PUT /api/2/subscriptions/{{alice-name}}/phone.json',
        'PATCH /api/2/episodes/{{alice-name}}.json',
        'DELETE /subscriptions/{{alice-name}}/phone.json',
        'POST /subscriptions/{{alice-name}}.json',
        'PUT /subscriptions/{{alice-name}}.json',
        'PUT /api/v1/sync',
        'DELETE /api/v1/sync',
        'PATCH /api/v1/sync',
        'POST /api/v1/subscriptions',
        'DELETE /api/v1/subscriptions/{{sync-id:0}}',
        'PUT /api/v1/subscriptions/{{sync-id:0}}',
        'GET /api/v1/sync/{{sync-id:0}}',
        'GET /api/v1/subscriptions/{{sync-id:0}}/x',
        'GET /api/v1',
        'GET /api/v2/sync',
        'GET /api/v1/episodes',
        'GET /auth/login',
        'GET /auth/refresh',
        'DELETE /auth/login',
        'POST /auth/logout',
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
