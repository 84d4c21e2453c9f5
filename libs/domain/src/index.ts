export * from './time';
export * from './events/log-event';
export { describeOutcome, describeRequest, isRecord } from './events/describe';
export * from './subscriptions/subscription';
export * from './subscriptions/change';
export * from './subscriptions/outcome';
export * from './subscriptions/feed-url';
export { DomainInvariantError } from './subscriptions/invariant';
export type { Decision, DecisionOf } from './subscriptions/decision';
export { Draft, evolve, initialState } from './subscriptions/evolve';
export * from './subscriptions/keys';
export { latestGuid, resolveSubscription } from './subscriptions/resolve';
export * from './subscriptions/subscription.decider';
export { conflictingUrl } from './gpodder/upload.slice';
export { DEVICE_ID, isDeviceId, toGpodderTime, toUnixSeconds } from './gpodder/device';
export {
  MAX_SCOPE_URL_LENGTH,
  MAX_SETTING_KEY_LENGTH,
  MAX_SETTING_VALUE_BYTES,
  MAX_SETTINGS_KEYS,
  settingKeyRefusal,
  settingsRequestRefusal,
  settingsScopeIdOf,
} from './gpodder/settings';
export * from './sync/ids';
export { SYNC_REASONS, MAX_AHEAD, MAX_SYNC_ACTIONS } from './sync/sync-action';
export { entityOf } from './sync/sync-view';
