export { DEFAULT_LIVE_SCHEMA, OUTAGE_LIMIT_MS, REPLAY_CONNECTIONS, replayInto, rideOut } from './replay';
export type { Offsets, ReplayOptions, ReplayProgress } from './replay';
export * from './verify';
