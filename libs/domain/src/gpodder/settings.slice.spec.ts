// decideSettingsUpdate: POST /api/2/settings/{user}/{scope}.json (SettingsUpdateRequested), given
// any earlier events. The API checks the request's own bounds before it reaches the log
// (settingsRequestRefusal); the decider checks them again, and the keys a scope holds after it.
import { SettingsScope } from '../events/log-event';
import { keysOf, reach } from '../subscriptions/keys';
import {
  ACCOUNT,
  at,
  deciderSpec,
  device,
  deviceUpdated,
  OTHER_USER,
  settingsUpdated,
  T1,
  T2,
  T3,
  USER,
} from '../testing';
import {
  MAX_SETTING_KEY_LENGTH,
  MAX_SETTING_VALUE_BYTES,
  MAX_SETTINGS_KEYS,
  settingsRequestRefusal,
  settingsScopeIdOf,
  settingsScopeOf,
} from './settings';

const P = 'https://a.example/rss';
const E1 = 'https://a.example/e1.mp3';
const PHONE: SettingsScope = { kind: 'device', deviceId: 'phone' };
const PODCAST: SettingsScope = { kind: 'podcast', podcast: P };
const EPISODE: SettingsScope = { kind: 'episode', podcast: P, episode: E1 };

const spec = deciderSpec();

/** The SettingsSaved change of `scope` holding `values`. */
const saved = (scope: SettingsScope, values: Record<string, unknown>, userId = USER) => ({
  kind: 'SettingsSaved' as const,
  settings: { userId, scopeId: settingsScopeIdOf(scope), scope, values },
});

const updated = (keys: number) => ({ kind: 'SettingsUpdated' as const, keys });

/** `n` keys `k0`… set to their index. */
const keys = (n: number, from = 0) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${from + i}`, from + i]));

describe('setting and removing', () => {
  it('sets keys of any JSON value in a scope that holds none, and answers how many it holds', () =>
    spec
      .when(
        at(T1, settingsUpdated(ACCOUNT, { set: { public_subscriptions: false, list: [1, { a: null }] } })),
      )
      .thenOutcome(updated(2))
      .thenChanges(saved(ACCOUNT, { public_subscriptions: false, list: [1, { a: null }] }), {
        kind: 'ClockAdvanced',
        userId: USER,
        lastInstant: T1,
      }));

  it('keeps the keys a change does not name, replaces those it sets, and drops those it removes', () =>
    spec
      .given(at(T1, settingsUpdated(ACCOUNT, { set: { a: 1, b: 2, c: 3 } })))
      .when(at(T2, settingsUpdated(ACCOUNT, { set: { b: 'two', d: 4 }, remove: ['c'] })))
      .thenOutcome(updated(3))
      .thenChanges(saved(ACCOUNT, { a: 1, b: 'two', d: 4 }), {
        kind: 'ClockAdvanced',
        userId: USER,
        lastInstant: T2,
      }));

  it('sets, then removes: a key both set and removed in one change ends removed, as gpodder.net does', () =>
    spec
      .given(at(T1, settingsUpdated(ACCOUNT, { set: { a: 1, b: 2 } })))
      .when(at(T2, settingsUpdated(ACCOUNT, { set: { a: 'new', c: 3 }, remove: ['a', 'c'] })))
      .thenOutcome(updated(1))
      .thenState((s) => {
        expect(s.settings.get(settingsScopeIdOf(ACCOUNT))?.values).toEqual({ b: 2 });
      }));

  it('removing every key leaves the scope empty, as one that never held any', () =>
    spec
      .given(at(T1, settingsUpdated(ACCOUNT, { set: { a: 1 } })))
      .when(at(T2, settingsUpdated(ACCOUNT, { remove: ['a'] })))
      .thenOutcome(updated(0))
      .thenChanges(saved(ACCOUNT, {}), { kind: 'ClockAdvanced', userId: USER, lastInstant: T2 }));

  it('a value that is null is a value: the key stays, unlike a removed one', () =>
    spec
      .when(at(T1, settingsUpdated(ACCOUNT, { set: { a: null } })))
      .thenOutcome(updated(1))
      .thenState((s) => 'a' in (s.settings.get(settingsScopeIdOf(ACCOUNT))?.values ?? {})));

  it('keys are kept as sent: case, spaces and digits make other keys, `__proto__`-like ones included', () =>
    spec
      .when(at(T1, settingsUpdated(ACCOUNT, { set: { Key: 1, key: 2, ' key': 3, '10': 4, constructor: 5 } })))
      .thenOutcome(updated(5))
      .thenState((s) => {
        const values = s.settings.get(settingsScopeIdOf(ACCOUNT))?.values ?? {};
        expect(Object.keys(values).sort()).toEqual([' key', '10', 'Key', 'constructor', 'key']);
        expect(Object.getPrototypeOf(values)).toBe(Object.prototype);
      }));
});

describe('a change that leaves every value as it was', () => {
  it('changes nothing, not even the clock, and still answers how many keys the scope holds', () =>
    spec
      .given(at(T1, settingsUpdated(ACCOUNT, { set: { a: { x: 1, y: [2] }, b: true } })))
      .when(at(T2, settingsUpdated(ACCOUNT, { set: { a: { y: [2], x: 1 } }, remove: ['missing'] })))
      .thenOutcome(updated(2))
      .thenNoChanges()
      .thenState((s) => s.lastInstant === T1));

  it('removing keys a scope never held changes nothing', () =>
    spec
      .when(at(T1, settingsUpdated(PODCAST, { remove: ['a', 'b'] })))
      .thenOutcome(updated(0))
      .thenNoChanges());

  it('an empty change changes nothing', () =>
    spec
      .when(at(T1, settingsUpdated(ACCOUNT, {})))
      .thenOutcome(updated(0))
      .thenNoChanges());

  it('an array in another order is another value', () =>
    spec
      .given(at(T1, settingsUpdated(ACCOUNT, { set: { a: [1, 2] } })))
      .when(at(T2, settingsUpdated(ACCOUNT, { set: { a: [2, 1] } })))
      .thenChanges(saved(ACCOUNT, { a: [2, 1] }), { kind: 'ClockAdvanced', userId: USER, lastInstant: T2 }));
});

describe('scopes', () => {
  it('the account, each device, each podcast and each episode hold settings of their own', () =>
    spec
      .given(
        at(T1, settingsUpdated(ACCOUNT, { set: { a: 'account' } })),
        at(T1, settingsUpdated(PHONE, { set: { a: 'phone' } })),
        at(T1, settingsUpdated({ kind: 'device', deviceId: 'Phone' }, { set: { a: 'Phone' } })),
        at(T1, settingsUpdated(PODCAST, { set: { a: 'podcast' } })),
        at(T1, settingsUpdated({ kind: 'podcast', podcast: `${P}/` }, { set: { a: 'other podcast' } })),
      )
      .when(at(T2, settingsUpdated(EPISODE, { set: { a: 'episode' } })))
      .thenState((s) => {
        const held = [...s.settings.values()].map((scope) => [scope.scope, scope.values['a']]);
        expect(held).toEqual([
          [ACCOUNT, 'account'],
          [PHONE, 'phone'],
          [{ kind: 'device', deviceId: 'Phone' }, 'Phone'],
          [PODCAST, 'podcast'],
          [{ kind: 'podcast', podcast: `${P}/` }, 'other podcast'],
          [EPISODE, 'episode'],
        ]);
      }));

  it('are named by their kind and parts: a podcast and an episode of it are two scopes', () => {
    const ids = [
      ACCOUNT,
      PHONE,
      PODCAST,
      EPISODE,
      { kind: 'episode', podcast: E1, episode: P },
      { kind: 'podcast', podcast: 'phone' },
    ].map((scope) => settingsScopeIdOf(scope as SettingsScope));
    expect(new Set(ids).size).toBe(ids.length);
    expect(settingsScopeIdOf({ kind: 'podcast', podcast: P })).toBe(ids[2]);
    // A UUID (version 8: castlog's own derivation) whatever the length of the URLs.
    const long = settingsScopeIdOf({ kind: 'episode', podcast: P, episode: `${E1}?${'x'.repeat(2000)}` });
    expect(long).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('a scope is stored with its own parts only, whatever else the logged event carried', () => {
    const carried = { kind: 'account', deviceId: 'phone', podcast: P } as unknown as SettingsScope;
    expect(settingsScopeOf(carried)).toEqual(ACCOUNT);
    expect(settingsScopeIdOf(carried)).toBe(settingsScopeIdOf(ACCOUNT));
    return spec
      .when(at(T1, settingsUpdated(carried, { set: { a: 1 } })))
      .thenChanges(saved(ACCOUNT, { a: 1 }), { kind: 'ClockAdvanced', userId: USER, lastInstant: T1 });
  });

  it("are the user's own: another user's change of the same scope is saved with that user's id", () =>
    deciderSpec(undefined, OTHER_USER)
      .when(at(T1, settingsUpdated(ACCOUNT, { set: { a: 1 } }, OTHER_USER)))
      .thenChanges(saved(ACCOUNT, { a: 1 }, OTHER_USER), {
        kind: 'ClockAdvanced',
        userId: OTHER_USER,
        lastInstant: T1,
      }));

  it('a change loads its scope, and its device for a device scope (keysOf, reach)', () =>
    spec
      .given(
        at(T1, settingsUpdated(PHONE, { set: { a: 1 } })),
        at(T1, settingsUpdated(PODCAST, { set: { b: 2 } })),
      )
      .when(at(T2, settingsUpdated(PHONE, { set: { a: 1 } })))
      .thenDecision(({ before }) => {
        const reached = reach(before, keysOf([settingsUpdated(PHONE, {})]));
        expect([...reached.settings.keys()]).toEqual([settingsScopeIdOf(PHONE)]);
        expect([...reached.devices.keys()]).toEqual(['phone']);
        expect(reach(before, keysOf([settingsUpdated(PHONE, {}, OTHER_USER)])).settings.size).toBe(0);
      }));
});

describe("a device scope's device", () => {
  it('is created by that first use, as an `other` without caption, used now', () =>
    spec
      .when(at(T1, settingsUpdated(PHONE, { set: { a: 1 } })))
      .thenChanges({ kind: 'DeviceSaved', device: device('phone', T1) }, saved(PHONE, { a: 1 }), {
        kind: 'ClockAdvanced',
        userId: USER,
        lastInstant: T1,
      }));

  it('is created even by a change that sets nothing', () =>
    spec
      .when(at(T1, settingsUpdated(PHONE, {})))
      .thenOutcome(updated(0))
      .thenChanges(
        { kind: 'DeviceSaved', device: device('phone', T1) },
        { kind: 'ClockAdvanced', userId: USER, lastInstant: T1 },
      ));

  it('keeps its fields when it exists, and its last use is now', () =>
    spec
      .given(at(T1, deviceUpdated('phone', { caption: 'Phone', type: 'mobile' })))
      .when(at(T2, settingsUpdated(PHONE, { set: { a: 1 } })))
      .thenChanges(
        { kind: 'DeviceSaved', device: device('phone', T2, 'Phone', 'mobile') },
        saved(PHONE, { a: 1 }),
        { kind: 'ClockAdvanced', userId: USER, lastInstant: T2 },
      ));

  it('is used by a change that leaves every value as it was: only its last use moves', () =>
    spec
      .given(at(T1, settingsUpdated(PHONE, { set: { a: 1 } })))
      .when(at(T2, settingsUpdated(PHONE, { set: { a: 1 } })))
      .thenOutcome(updated(1))
      .thenChanges(
        { kind: 'DeviceSaved', device: device('phone', T2) },
        { kind: 'ClockAdvanced', userId: USER, lastInstant: T2 },
      ));

  it('is not created by a refused change', () =>
    spec
      .when(at(T1, settingsUpdated(PHONE, { set: { '': 1 } })))
      .thenNoChanges()
      .thenState((s) => s.devices.size === 0));

  it('keeps its last use through a refused change: a refused request changes nothing', () =>
    spec
      .given(at(T1, deviceUpdated('phone')))
      .when(at(T2, settingsUpdated(PHONE, { set: { '': 1 } })))
      .thenNoChanges()
      .thenState((s) => s.devices.get('phone')?.lastUsed === T1));
});

describe(`at most ${MAX_SETTINGS_KEYS} keys a scope`, () => {
  const refused = (left: number) => ({
    kind: 'SettingsRefused' as const,
    message: `a scope holds at most ${MAX_SETTINGS_KEYS} settings; this change would leave ${left}`,
  });

  it(`a change that leaves ${MAX_SETTINGS_KEYS} keys is applied`, () =>
    spec
      .given(at(T1, settingsUpdated(ACCOUNT, { set: keys(60) })))
      .when(at(T2, settingsUpdated(ACCOUNT, { set: keys(40, 60) })))
      .thenOutcome(updated(MAX_SETTINGS_KEYS)));

  it('one more is refused whole: nothing is set, nothing removed, the clock stays', () =>
    spec
      .given(at(T1, settingsUpdated(ACCOUNT, { set: keys(60) })))
      .when(at(T2, settingsUpdated(ACCOUNT, { set: keys(42, 60), remove: ['k0', 'k0'] })))
      .thenOutcome(refused(MAX_SETTINGS_KEYS + 1))
      .thenNoChanges()
      .thenState((s) => s.lastInstant === T1));

  it('counts after removing: a full scope takes a new key in the change that removes another', () =>
    spec
      .given(at(T1, settingsUpdated(ACCOUNT, { set: keys(MAX_SETTINGS_KEYS) })))
      .when(at(T2, settingsUpdated(ACCOUNT, { set: { new: 1 }, remove: ['k0'] })))
      .thenOutcome(updated(MAX_SETTINGS_KEYS)));

  it('a full scope refuses a new key, and still takes a new value of a key it holds', () =>
    spec
      .given(
        at(T1, settingsUpdated(ACCOUNT, { set: keys(MAX_SETTINGS_KEYS) })),
        at(T2, settingsUpdated(ACCOUNT, { set: { new: 1 } })),
      )
      .when(at(T3, settingsUpdated(ACCOUNT, { set: { k5: 'five' } })))
      .thenOutcome(updated(MAX_SETTINGS_KEYS))
      .thenState((s) => s.settings.get(settingsScopeIdOf(ACCOUNT))?.values['k5'] === 'five'));

  it("each scope counts its own keys: a full account leaves a device's free", () =>
    spec
      .given(at(T1, settingsUpdated(ACCOUNT, { set: keys(MAX_SETTINGS_KEYS) })))
      .when(at(T2, settingsUpdated(PHONE, { set: keys(MAX_SETTINGS_KEYS) })))
      .thenOutcome(updated(MAX_SETTINGS_KEYS)));
});

describe("the request's own bounds, checked again (a log the API did not write)", () => {
  const refusedWith = (message: string) => ({ kind: 'SettingsRefused' as const, message });

  it.each([
    [
      'more keys set than a scope holds',
      { set: keys(MAX_SETTINGS_KEYS + 1) },
      'set must hold at most 100 keys',
    ],
    [
      'more keys removed than a scope holds',
      { remove: Array.from({ length: MAX_SETTINGS_KEYS + 1 }, (_, i) => `k${i}`) },
      'remove must hold at most 100 keys',
    ],
    ['an empty key', { set: { '': 1 } }, 'setting keys must be strings of 1 to 255 characters'],
    [
      `a key of ${MAX_SETTING_KEY_LENGTH + 1} characters`,
      { remove: ['é'.repeat(MAX_SETTING_KEY_LENGTH + 1)] },
      'setting keys must be strings of 1 to 255 characters',
    ],
    [
      `a value of more than ${MAX_SETTING_VALUE_BYTES} bytes of JSON`,
      { set: { big: 'x'.repeat(MAX_SETTING_VALUE_BYTES) } },
      `the value of "big" must be at most ${MAX_SETTING_VALUE_BYTES} bytes of JSON`,
    ],
  ])('refuses %s, changing nothing', (_name, body, message) =>
    spec
      .when(at(T1, settingsUpdated(ACCOUNT, body as Parameters<typeof settingsUpdated>[1])))
      .thenOutcome(refusedWith(message))
      .thenNoChanges(),
  );

  it(`takes keys of ${MAX_SETTING_KEY_LENGTH} characters, counted as code points, and values of ${MAX_SETTING_VALUE_BYTES} bytes`, () => {
    const key = '😀'.repeat(MAX_SETTING_KEY_LENGTH);
    // Its JSON text is the string and two quotes: 2 + 3 × 5460 ('€' is 3 bytes of UTF-8) + 2.
    const value = `${'€'.repeat(5460)}xx`;
    expect(2 + 3 * 5460 + 2).toBe(MAX_SETTING_VALUE_BYTES);
    expect(settingsRequestRefusal({ [key]: value }, [key])).toBeUndefined();
    expect(settingsRequestRefusal({ a: `${value}x` }, [])).toMatch(/must be at most/);
    return spec.when(at(T1, settingsUpdated(ACCOUNT, { set: { [key]: value } }))).thenOutcome(updated(1));
  });
});
