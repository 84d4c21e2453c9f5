import { sha256 } from '@noble/hashes/sha256';
import { utf8ToBytes } from '@noble/hashes/utils';
import { SettingsScope } from '../events/log-event';
import { MAX_FEED_URL_LENGTH } from '../subscriptions/feed-url';
import { asUuid } from '../sync/ids';
import { canonical } from '../sync/sync-action';

// gpodder.net's settings: key-value pairs attached to the account, a device, a podcast or an
// episode. The bounds below are castlog's (gpodder.net documents none), checked by the API before
// a request reaches the log and again by the decider.

/** The most keys a scope holds, and the most one request sets or removes (each). */
export const MAX_SETTINGS_KEYS = 100;
/** The longest key, in characters (code points). */
export const MAX_SETTING_KEY_LENGTH = 255;
/** The largest value: its JSON text, in UTF-8 bytes. */
export const MAX_SETTING_VALUE_BYTES = 16 * 1024;
/** The longest `podcast` or `episode` URL naming a scope, in characters: a feed URL's bound. */
export const MAX_SCOPE_URL_LENGTH = MAX_FEED_URL_LENGTH;

/** A scope's id: the first 16 bytes of SHA-256 of its kind and parts (as a JSON list), in UUID
 * version 8 form. A fixed function of the scope alone, so the read model keys a scope by 16 bytes
 * whatever the length of its URLs, and a replay finds the same id. */
export const settingsScopeIdOf = (scope: SettingsScope): string =>
  asUuid(sha256(utf8ToBytes(`castlog settings\u0000${JSON.stringify(scopeParts(scope))}`)), 8);

/** The scope with its own fields only (the log's schema lets others through): as the read model
 * stores it and gives it back. */
export const settingsScopeOf = (scope: SettingsScope): SettingsScope => {
  switch (scope.kind) {
    case 'account':
      return { kind: 'account' };
    case 'device':
      return { kind: 'device', deviceId: scope.deviceId };
    case 'podcast':
      return { kind: 'podcast', podcast: scope.podcast };
    case 'episode':
      return { kind: 'episode', podcast: scope.podcast, episode: scope.episode };
  }
};

const scopeParts = (scope: SettingsScope): string[] => {
  switch (scope.kind) {
    case 'account':
      return ['account'];
    case 'device':
      return ['device', scope.deviceId];
    case 'podcast':
      return ['podcast', scope.podcast];
    case 'episode':
      return ['episode', scope.podcast, scope.episode];
  }
};

/** Why a key is refused, if it is: not a string of 1 to MAX_SETTING_KEY_LENGTH characters, counted
 * as code points (as JSON Schema's `maxLength` counts them; a longer string in UTF-16 units is
 * longer in code points than half its length). */
export const settingKeyRefusal = (key: unknown): string | undefined =>
  typeof key === 'string' &&
  key.length > 0 &&
  key.length <= 2 * MAX_SETTING_KEY_LENGTH &&
  [...key].length <= MAX_SETTING_KEY_LENGTH
    ? undefined
    : `setting keys must be strings of 1 to ${MAX_SETTING_KEY_LENGTH} characters`;

/** A value's size as bounded: the UTF-8 bytes of its JSON text. */
export const settingValueBytes = (value: unknown): number => utf8ToBytes(JSON.stringify(value) ?? '').length;

/** Why a request's own parts are refused, if they are: too many keys set or removed, a key out of
 * bounds, a value larger than MAX_SETTING_VALUE_BYTES. The first refusal found, in that order. */
export function settingsRequestRefusal(
  set: Readonly<Record<string, unknown>>,
  remove: readonly unknown[],
): string | undefined {
  const entries = Object.entries(set);
  if (entries.length > MAX_SETTINGS_KEYS) return `set must hold at most ${MAX_SETTINGS_KEYS} keys`;
  if (remove.length > MAX_SETTINGS_KEYS) return `remove must hold at most ${MAX_SETTINGS_KEYS} keys`;
  for (const key of [...entries.map(([key]) => key), ...remove]) {
    const refusal = settingKeyRefusal(key);
    if (refusal !== undefined) return refusal;
  }
  const large = entries.find(([, value]) => settingValueBytes(value) > MAX_SETTING_VALUE_BYTES);
  return large === undefined
    ? undefined
    : `the value of ${JSON.stringify(large[0])} must be at most ${MAX_SETTING_VALUE_BYTES} bytes of JSON`;
}

/** Whether two JSON values are the same, whatever the order of their objects' keys (the read model
 * keeps them in its own order). */
export const sameJson = (a: unknown, b: unknown): boolean =>
  a === b || JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
