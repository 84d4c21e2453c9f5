import { SettingsUpdateRequested } from '../events/log-event';
import { Instant } from '../time';
import { Change } from '../subscriptions/change';
import { DecisionOf, finish } from '../subscriptions/decision';
import { UserSubscriptions } from '../subscriptions/subscription';
import { deviceUsed } from './device';
import {
  MAX_SETTINGS_KEYS,
  sameJson,
  settingsRequestRefusal,
  settingsScopeIdOf,
  settingsScopeOf,
} from './settings';

// POST /api/2/settings/{user}/{scope}.json: SettingsUpdateRequested.

/** Sets then removes, as gpodder.net does: a key both set and removed ends removed. The change is
 * refused whole when the request breaks its own bounds (the API refuses such a request first) or
 * when the scope would hold more than MAX_SETTINGS_KEYS keys after it. A device scope's device was
 * used now (created by that first use). Otherwise a change that leaves every value as it was
 * changes nothing, not even the clock; its outcome still counts the scope's keys. */
export const decideSettingsUpdate = (
  state: UserSubscriptions,
  event: SettingsUpdateRequested,
  now: Instant,
): DecisionOf<SettingsUpdateRequested> => {
  const refused = settingsRequestRefusal(event.set, event.remove);
  if (refused !== undefined) return { outcome: { kind: 'SettingsRefused', message: refused }, changes: [] };
  const scopeId = settingsScopeIdOf(event.scope);
  const before = state.settings.get(scopeId)?.values ?? {};
  const values = new Map(Object.entries(before));
  for (const [key, value] of Object.entries(event.set)) values.set(key, value);
  for (const key of event.remove) values.delete(key);
  if (values.size > MAX_SETTINGS_KEYS) {
    const message = `a scope holds at most ${MAX_SETTINGS_KEYS} settings; this change would leave ${values.size}`;
    return { outcome: { kind: 'SettingsRefused', message }, changes: [] };
  }
  const outcome = { kind: 'SettingsUpdated', keys: values.size } as const;
  const kept = Object.entries(before);
  const unchanged =
    kept.length === values.size &&
    kept.every(([key, value]) => values.has(key) && sameJson(values.get(key), value));
  const used = event.scope.kind === 'device' ? [deviceUsed(state, event.scope.deviceId, now)] : [];
  if (unchanged && used.length === 0) return { outcome, changes: [] };
  const changes: Change[] = [...used];
  if (!unchanged) {
    changes.push({
      kind: 'SettingsSaved',
      settings: {
        userId: state.userId,
        scopeId,
        scope: settingsScopeOf(event.scope),
        values: Object.fromEntries(values),
      },
    });
  }
  return { outcome, changes: finish(state, changes, now) };
};
