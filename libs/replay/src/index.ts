export { DEFAULT_LIVE_SCHEMA, replayInto } from './replay';
export type { Offsets, ReplayOptions, ReplayProgress } from './replay';
export * from './verify';
