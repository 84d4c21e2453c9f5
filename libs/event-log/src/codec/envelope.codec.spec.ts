import {
  LOG_EVENT_TYPES,
  LOG_EVENT_VERSION,
  LogEvent,
  LogEventType,
  MAX_SETTING_KEY_LENGTH,
  MAX_SETTINGS_KEYS,
  MAX_SYNC_ACTIONS,
} from '@castlog/domain';
import { randomUUID } from 'node:crypto';
import {
  checkEvent,
  decodeRecord,
  decodeValue,
  encodeValue,
  EventHeaders,
  MalformedEventError,
  MAX_PLAY_SECONDS,
  unstorablePart,
} from './envelope.codec';

const headersOf = (type: string): EventHeaders => ({
  type,
  version: LOG_EVENT_VERSION,
  eventId: randomUUID(),
  requestId: randomUUID(),
});

/** What `checkEvent` answers for `value` under its own type's headers: `ok`, or the error's text. */
function verdict(value: Record<string, unknown>, text?: string): string {
  try {
    checkEvent(headersOf(value['type'] as string), value, text);
    return 'ok';
  } catch (error) {
    expect(error).toBeInstanceOf(MalformedEventError);
    return (error as Error).message;
  }
}

const user = 'user-1';
const guid = '0f8fad5b-d9cb-469f-a165-70867728950e';
const add = (items: unknown[]) => ({ type: 'SubscriptionsAddRequested', userId: user, items });
const item = (fields: Record<string, unknown> = {}) => ({
  feedUrl: 'https://example.com/feed.xml',
  candidateGuid: randomUUID(),
  ...fields,
});
const action = (fields: Record<string, unknown> = {}) => ({
  podcast: 'https://example.com/feed.xml',
  episode: 'https://example.com/1.mp3',
  action: 'play',
  ...fields,
});
const actions = (...list: unknown[]) => ({ type: 'EpisodeActionsUploaded', userId: user, actions: list });
const client = '5f0c6a1e-8d3b-4c2a-9e7f-1b2c3d4e5f60';
const subscribe = (fields: Record<string, unknown> = {}) => ({
  type: 'subscription',
  action: 'subscribe',
  action_id: '7d444840-9dc0-41dd-8e6a-5c1a1b8a2f3e',
  occurred_at: '2026-11-26T01:02:03.123456+01:00',
  data: { feed_url: 'https://example.com/feed.xml' },
  ...fields,
});
const sync = (list: unknown[], fields: Record<string, unknown> = {}) => ({
  type: 'SyncActionsPosted',
  userId: user,
  clientId: client,
  actions: list,
  ...fields,
});
const device = (fields: Record<string, unknown>) => ({
  type: 'DeviceUpdateRequested',
  userId: user,
  deviceId: 'phone',
  ...fields,
});

const settings = (scope: unknown, fields: Record<string, unknown> = {}) => ({
  type: 'SettingsUpdateRequested',
  userId: user,
  scope,
  set: { public_subscriptions: false },
  remove: ['flattr_token'],
  ...fields,
});

type EventOf<K extends LogEventType> = Extract<LogEvent, { type: K }>;

/** An event of every type with each property its type has, written against the domain's types: a
 * property the domain adds or renames does not compile here until it is given. */
const FULL: { readonly [K in LogEventType]: Required<EventOf<K>> } = {
  SubscriptionsAddRequested: {
    type: 'SubscriptionsAddRequested',
    userId: user,
    items: [{ feedUrl: 'https://example.com/feed.xml', guid, candidateGuid: guid }],
  },
  SubscriptionUpdateRequested: {
    type: 'SubscriptionUpdateRequested',
    userId: user,
    guid,
    newFeedUrl: 'https://example.com/new.xml',
    newGuid: guid,
    isSubscribed: true,
  },
  DeletionRequested: { type: 'DeletionRequested', userId: user, guid },
  DeletionCompleted: { type: 'DeletionCompleted', userId: user, deletionId: 1, deletedAt: 1_700_000_000_000 },
  DeletionFailed: { type: 'DeletionFailed', userId: user, deletionId: 1, reason: 'lock timeout' },
  DeviceUpdateRequested: {
    type: 'DeviceUpdateRequested',
    userId: user,
    deviceId: 'phone',
    caption: 'My phone',
    deviceType: 'mobile',
  },
  GpodderUploadRequested: {
    type: 'GpodderUploadRequested',
    userId: user,
    deviceId: 'phone',
    add: [{ feedUrl: 'https://example.com/feed.xml', candidateGuid: guid }],
    remove: ['https://example.com/old.xml'],
    replace: false,
  },
  EpisodeActionsUploaded: {
    type: 'EpisodeActionsUploaded',
    userId: user,
    actions: [
      {
        podcast: 'https://example.com/feed.xml',
        episode: 'https://example.com/1.mp3',
        action: 'play',
        timestamp: '2026-11-26T01:02:03',
        device: 'phone',
        guid: 'episode-1',
        started: 0,
        position: 10,
        total: 3600,
      },
    ],
  },
  SyncActionsPosted: {
    type: 'SyncActionsPosted',
    userId: user,
    clientId: '5f0c6a1e-8d3b-4c2a-9e7f-1b2c3d4e5f60',
    actions: [
      {
        type: 'subscription',
        action: 'subscribe',
        action_id: '7d444840-9dc0-41dd-8e6a-5c1a1b8a2f3e',
        occurred_at: '2026-11-26T01:02:03.123456Z',
        data: { feed_url: 'https://example.com/feed.xml' },
      },
    ],
  },
  FeedMoved: {
    type: 'FeedMoved',
    userId: user,
    feedUrl: 'https://example.com/feed.xml',
    newFeedUrl: 'https://feeds.example.org/feed.xml',
    cause: 'permanent-redirect',
    guids: [guid],
  },
  SettingsUpdateRequested: {
    type: 'SettingsUpdateRequested',
    userId: user,
    scope: { kind: 'episode', podcast: 'https://example.com/feed.xml', episode: 'https://example.com/1.mp3' },
    set: { public_subscriptions: false, nested: { list: [1, 'two', null] } },
    remove: ['flattr_token'],
  },
};

/** The keys of T's properties that are not optional. */
type RequiredKey<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];

/** The properties each event type must have, as the domain types them. */
const REQUIRED: { readonly [K in LogEventType]: readonly RequiredKey<EventOf<K>>[] } = {
  SubscriptionsAddRequested: ['type', 'userId', 'items'],
  SubscriptionUpdateRequested: ['type', 'userId', 'guid'],
  DeletionRequested: ['type', 'userId', 'guid'],
  DeletionCompleted: ['type', 'userId', 'deletionId', 'deletedAt'],
  DeletionFailed: ['type', 'userId', 'deletionId', 'reason'],
  DeviceUpdateRequested: ['type', 'userId', 'deviceId'],
  GpodderUploadRequested: ['type', 'userId', 'deviceId', 'add', 'remove'],
  EpisodeActionsUploaded: ['type', 'userId', 'actions'],
  SyncActionsPosted: ['type', 'userId', 'clientId', 'actions'],
  FeedMoved: ['type', 'userId', 'feedUrl', 'newFeedUrl', 'cause', 'guids'],
  SettingsUpdateRequested: ['type', 'userId', 'scope', 'set', 'remove'],
};

// The compiler holds each schema against its domain type (NO_DRIFT in envelope.codec.ts); these
// hold the compiled validators against samples of every type.
describe('the event schemas and the domain types', () => {
  it.each(LOG_EVENT_TYPES)('accept a %s with every property and with only the required ones', (type) => {
    const full = FULL[type] as Record<string, unknown>;
    expect(verdict(full)).toBe('ok');
    const required = Object.fromEntries(REQUIRED[type].map((key) => [key, full[key as string]]));
    expect(verdict(required)).toBe('ok');
  });

  it.each(LOG_EVENT_TYPES)('refuse a %s without any one of its required properties', (type) => {
    for (const key of REQUIRED[type]) {
      if (key === 'type') continue;
      const { [key as string]: _left, ...rest } = FULL[type] as Record<string, unknown>;
      expect(verdict({ ...rest, type })).toMatch(`must have required property '${String(key)}'`);
    }
  });
});

describe('checkEvent', () => {
  describe('given an event of every type that matches its schema', () => {
    it.each([
      [
        'an add of raw items, feed URLs and guids of any JSON type',
        add([item(), item({ feedUrl: 42, guid: null })]),
      ],
      ['an add of 1,000 items', add(Array.from({ length: 1000 }, () => item()))],
      [
        'an update with every optional field',
        {
          type: 'SubscriptionUpdateRequested',
          userId: user,
          guid,
          newFeedUrl: 'https://example.com/new.xml',
          newGuid: guid.toUpperCase(),
          isSubscribed: false,
        },
      ],
      ['an update with none', { type: 'SubscriptionUpdateRequested', userId: user, guid }],
      ['a deletion request', { type: 'DeletionRequested', userId: user, guid }],
      [
        'a completed deletion',
        { type: 'DeletionCompleted', userId: user, deletionId: 0, deletedAt: 1_700_000_000_000 },
      ],
      ['a failed deletion', { type: 'DeletionFailed', userId: user, deletionId: 3, reason: '' }],
      ['a device update', device({ caption: 'My phone', deviceType: 'mobile' })],
      [
        'an upload',
        {
          type: 'GpodderUploadRequested',
          userId: user,
          deviceId: 'a.b_c-1',
          add: [item()],
          remove: ['https://example.com/old.xml', 7],
          replace: true,
        },
      ],
      [
        'episode actions with every field',
        actions(
          action({
            timestamp: '2026-11-26T01:02:03',
            device: 'phone',
            guid: 'episode-1',
            started: 0,
            position: MAX_PLAY_SECONDS,
            total: 3600,
          }),
        ),
      ],
      [
        'sync actions as sent, of any JSON (the decider judges each)',
        sync([subscribe(), subscribe({ data: 'not an object', occurred_at: 7 }), 'text', null, [1, 2], {}]),
      ],
      [`${MAX_SYNC_ACTIONS} sync actions`, sync(Array.from({ length: MAX_SYNC_ACTIONS }, () => subscribe()))],
      ['settings of the account', settings({ kind: 'account' })],
      ['settings of a device', settings({ kind: 'device', deviceId: 'a.b_c-1' })],
      ['settings of a podcast', settings({ kind: 'podcast', podcast: 'any text names a podcast' })],
      [
        `${MAX_SETTINGS_KEYS} settings set and as many removed, keys of ${MAX_SETTING_KEY_LENGTH} characters`,
        settings(
          { kind: 'account' },
          {
            set: Object.fromEntries(
              Array.from({ length: MAX_SETTINGS_KEYS }, (_, i) => [
                `${i}`.padEnd(MAX_SETTING_KEY_LENGTH, '€'),
                i,
              ]),
            ),
            remove: Array.from({ length: MAX_SETTINGS_KEYS }, () => '😀'.repeat(MAX_SETTING_KEY_LENGTH)),
          },
        ),
      ],
      ['fields that a newer writer added', { ...add([item()]), addedLater: { any: 'thing' } }],
      ['an explicitly undefined optional field', device({ caption: undefined })],
    ])('accepts %s', (_name, value) => {
      expect(verdict(value)).toBe('ok');
    });
  });

  describe('given an event its schema refuses', () => {
    it.each([
      [
        'a guid that is not a UUID',
        { type: 'DeletionRequested', userId: user, guid: 'not-a-guid' },
        /\/guid/,
      ],
      ['a UUID as a URN', { type: 'DeletionRequested', userId: user, guid: `urn:uuid:${guid}` }, /\/guid/],
      ['a UUID with braces', { type: 'DeletionRequested', userId: user, guid: `{${guid}}` }, /\/guid/],
      ['an empty user id', { type: 'DeletionRequested', userId: '', guid }, /\/userId/],
      ['no user id', { type: 'DeletionRequested', guid }, /userId/],
      ['an add of no items', add([]), /\/items/],
      ['an add of 1,001 items', add(Array.from({ length: 1001 }, () => item())), /\/items/],
      ['an item without its candidate guid', add([{ feedUrl: 'https://example.com/' }]), /candidateGuid/],
      ['an item that is not an object', add(['https://example.com/']), /\/items\/0/],
      ['items that are not an array', add({ 0: item() } as unknown as unknown[]), /\/items/],
      [
        'a feed URL of the wrong type',
        { type: 'SubscriptionUpdateRequested', userId: user, guid, newFeedUrl: 1 },
        /newFeedUrl/,
      ],
      [
        'a flag that is not a boolean',
        { type: 'SubscriptionUpdateRequested', userId: user, guid, isSubscribed: 'true' },
        /isSubscribed/,
      ],
      [
        'a negative deletion id',
        { type: 'DeletionCompleted', userId: user, deletionId: -1, deletedAt: 0 },
        /deletionId/,
      ],
      [
        'a fractional instant',
        { type: 'DeletionCompleted', userId: user, deletionId: 1, deletedAt: 1.5 },
        /deletedAt/,
      ],
      [
        'an instant given as text',
        { type: 'DeletionCompleted', userId: user, deletionId: 1, deletedAt: '1' },
        /deletedAt/,
      ],
      [
        'an infinite instant',
        { type: 'DeletionCompleted', userId: user, deletionId: 1, deletedAt: Infinity },
        /deletedAt/,
      ],
      ['no reason', { type: 'DeletionFailed', userId: user, deletionId: 1 }, /reason/],
      ['a device id with a slash', device({ deviceId: 'a/b' }), /deviceId/],
      ['a device id of 65 characters', device({ deviceId: 'x'.repeat(65) }), /deviceId/],
      ['an unknown device type', device({ deviceType: 'toaster' }), /deviceType/],
      [
        'an upload of 10,001 removals',
        {
          type: 'GpodderUploadRequested',
          userId: user,
          deviceId: 'phone',
          add: [],
          remove: Array.from({ length: 10_001 }, (_, i) => `https://example.com/${i}`),
        },
        /remove/,
      ],
      [
        'an upload without its removals',
        { type: 'GpodderUploadRequested', userId: user, deviceId: 'phone', add: [] },
        /remove/,
      ],
      ['an unknown action', actions(action({ action: 'stream' })), /action/],
      ['an action without its episode', actions({ podcast: 'p', action: 'new' }), /episode/],
      ['a timestamp with a zone', actions(action({ timestamp: '2026-11-26T01:02:03Z' })), /timestamp/],
      [
        'a position past what the read model stores',
        actions(action({ position: MAX_PLAY_SECONDS + 1 })),
        /position/,
      ],
      ['a negative start', actions(action({ started: -1 })), /started/],
      ['a device id in an action that is not one', actions(action({ device: 'my phone' })), /device/],
      ['a settings scope of no known kind', settings({ kind: 'user' }), /\/scope/],
      ['a device scope without its device', settings({ kind: 'device' }), /\/scope/],
      ['a device scope naming no device id', settings({ kind: 'device', deviceId: 'my phone' }), /\/scope/],
      ['an episode scope without its podcast', settings({ kind: 'episode', episode: 'e' }), /\/scope/],
      ['a podcast scope naming an empty URL', settings({ kind: 'podcast', podcast: '' }), /\/scope/],
      [
        `more than ${MAX_SETTINGS_KEYS} settings set`,
        settings(
          { kind: 'account' },
          { set: Object.fromEntries(Array.from({ length: MAX_SETTINGS_KEYS + 1 }, (_, i) => [`k${i}`, i])) },
        ),
        /\/set/,
      ],
      ['an empty setting key', settings({ kind: 'account' }, { set: { '': 1 } }), /\/set/],
      [
        `a setting key of ${MAX_SETTING_KEY_LENGTH + 1} characters`,
        settings({ kind: 'account' }, { remove: ['😀'.repeat(MAX_SETTING_KEY_LENGTH + 1)] }),
        /\/remove/,
      ],
      ['a removed key that is not a string', settings({ kind: 'account' }, { remove: [1] }), /\/remove/],
      ['settings set as a list', settings({ kind: 'account' }, { set: [['a', 1]] }), /\/set/],
      ['a sync request of no actions', sync([]), /\/actions/],
      [
        `a sync request of ${MAX_SYNC_ACTIONS + 1} actions`,
        sync(Array.from({ length: MAX_SYNC_ACTIONS + 1 }, () => subscribe())),
        /\/actions/,
      ],
      ['sync actions that are not an array', sync({ 0: subscribe() } as unknown as unknown[]), /\/actions/],
      ['a sync request without its client', sync([subscribe()], { clientId: undefined }), /clientId/],
      ['a Client-ID that is not a UUID', sync([subscribe()], { clientId: 'my-phone' }), /\/clientId/],
      ['a Client-ID in upper case', sync([subscribe()], { clientId: client.toUpperCase() }), /\/clientId/],
      [
        'a Client-ID of another UUID version',
        sync([subscribe()], { clientId: 'c232ab00-9414-11ec-b3c8-9e6bdeced846' }),
        /\/clientId/,
      ],
    ])('refuses %s, naming the field', (_name, value, field) => {
      const message = verdict(value as Record<string, unknown>);
      expect(message).toMatch(new RegExp(`^${value.type} does not match its schema`));
      expect(message).toMatch(field);
    });

    it('refuses a value whose type is not its header type', () => {
      const value = { type: 'DeletionRequested', userId: user, guid };
      expect(() => checkEvent(headersOf('DeletionCompleted'), value)).toThrow(
        /^DeletionCompleted does not match/,
      );
    });

    it('refuses an unknown type and another version', () => {
      const value = { type: 'DeletionRequested', userId: user, guid };
      expect(() => checkEvent(headersOf('SubscriptionsRenamed'), value)).toThrow(/unknown event type/);
      expect(() =>
        checkEvent({ ...headersOf('DeletionRequested'), version: LOG_EVENT_VERSION + 1 }, value),
      ).toThrow(/version .* is not supported/);
    });

    it.each([null, [], 'text', 1])('refuses %p', (value) => {
      expect(() => checkEvent(headersOf('DeletionRequested'), value)).toThrow(/does not match its schema/);
    });
  });

  describe('given strings the read model cannot store', () => {
    const unstorable = /U\+0000 or an unpaired surrogate/;
    const emoji = '\ud83c\udf99'; // 🎙, a surrogate pair

    it.each([
      ['U+0000 in a feed URL', add([item({ feedUrl: 'https://example.com/\u0000' })])],
      ['a lone high surrogate at the end of a string', add([item({ guid: 'x\ud800' })])],
      ['a lone low surrogate at the start of a string', add([item({ guid: '\udc00x' })])],
      ['U+0000 in a key', { ...add([item()]), ['k\u0000']: 1 }],
      ['U+0000 deep in an episode action', actions(action({ episode: 'https://example.com/\u0000.mp3' }))],
      ['a lone surrogate deep in a sync action', sync([subscribe({ data: { feed_url: ['x\ud800'] } })])],
      ['U+0000 in a key of a sync action', sync([{ ...subscribe(), ['k\u0000']: 1 }])],
    ])('refuses %s, from the value and from its JSON alike', (_name, value) => {
      expect(verdict(value)).toMatch(unstorable);
      expect(verdict(value, encodeValue(value as unknown as LogEvent))).toMatch(unstorable);
    });

    it('refuses them in JSON that a foreign producer escaped, when decoding', () => {
      const headers = headersOf('DeletionFailed');
      const failed = (reason: string) =>
        `{"type":"DeletionFailed","userId":"${user}","deletionId":1,"reason":"${reason}"}`;
      expect(() => decodeValue(headers, failed('a\\u0000b'))).toThrow(unstorable);
      expect(() => decodeValue(headers, failed('a\\uD800b'))).toThrow(unstorable);
      expect(() => decodeValue(headers, failed('a\\udc00'))).toThrow(unstorable);
      // An escaped pair is one character, and an escaped backslash before "u0000" is text.
      expect(decodeValue(headers, failed('a\\ud83c\\udf99b'))).toMatchObject({ reason: `a${emoji}b` });
      expect(decodeValue(headers, failed('a\\\\u0000b'))).toMatchObject({ reason: 'a\\u0000b' });
    });

    it('refuses them written raw in the JSON given with the value', () => {
      // JSON.stringify escapes a lone surrogate; another writer of the same JSON may not.
      const value = add([item({ guid: 'x\ud800' })]);
      const raw = `{"type":"SubscriptionsAddRequested","userId":"${user}","items":[{"feedUrl":"https://example.com/feed.xml","candidateGuid":"${guid}","guid":"x\ud800"}]}`;
      expect(verdict(value, raw)).toMatch(unstorable);
    });

    it('accepts surrogate pairs, raw and escaped', () => {
      const value = add([item({ guid: `${emoji} pod ${emoji}` })]);
      expect(verdict(value)).toBe('ok');
      expect(verdict(value, encodeValue(value as unknown as LogEvent))).toBe('ok');
    });

    it('refuses an unstorable request id', () => {
      const value = { type: 'DeletionRequested', userId: user, guid };
      expect(() => checkEvent({ ...headersOf('DeletionRequested'), requestId: 'r-\ud800' }, value)).toThrow(
        unstorable,
      );
    });
  });

  it('decodes what it encodes', () => {
    const value = add([item({ guid: 'a "quoted" \\ guid' })]) as unknown as LogEvent;
    expect(decodeValue(headersOf(value.type), encodeValue(value))).toEqual(value);
  });

  it('reads a record back as its headers, its decoded value and where the log keeps it', () => {
    const value = add([item()]) as unknown as LogEvent;
    const headers = headersOf(value.type);
    const at = { key: user, partition: 3, offset: 41, timestamp: 1_700_000_000_000 };
    expect(decodeRecord(headers, encodeValue(value), at)).toStrictEqual({ ...headers, ...at, value });
    expect(() => decodeRecord(headersOf('DeletionRequested'), encodeValue(value), at)).toThrow(
      MalformedEventError,
    );
  });
});

describe('unstorablePart', () => {
  const nested = (depth: number): unknown => (depth === 0 ? 'leaf' : { next: nested(depth - 1) });

  it('finds nothing in a value PostgreSQL can store', () => {
    expect(unstorablePart({ a: ['x', 1, null, { b: 'y\u00e9\ud83c\udf99' }] })).toBeUndefined();
  });

  it.each([
    ['a string with U+0000', { items: [{ feed: 'a\u0000' }] }, 'string'],
    ['a string with a lone surrogate', ['\ud800'], 'string'],
    ['a key with U+0000', { ok: { 'k\u0000': 1 } }, 'key'],
    ['a key with a lone surrogate', { '\udc00': 1 }, 'key'],
    ['a number beyond a double (1e400)', JSON.parse('{"items": [{"guid": 1e400}]}') as unknown, 'number'],
    ['a number below a double (-1e400)', JSON.parse('[-1e400]') as unknown, 'number'],
  ])('finds %s at any depth', (_, value, part) => {
    expect(unstorablePart(value)).toBe(part);
  });

  it('finds an object nested deeper than the depth it is given, and only then', () => {
    expect(unstorablePart(nested(3), { depth: 3 })).toBeUndefined();
    expect(unstorablePart(nested(4), { depth: 3 })).toBe('depth');
    expect(unstorablePart(nested(40))).toBeUndefined();
  });

  it('finds the key it is told to refuse, and no other', () => {
    const value = JSON.parse('{"a": {"__proto__": {"polluted": 1}}}') as unknown;
    expect(unstorablePart(value, { key: '__proto__' })).toBe('refused key');
    expect(unstorablePart(value)).toBeUndefined();
    expect(unstorablePart({ proto: 1 }, { key: '__proto__' })).toBeUndefined();
  });
});
