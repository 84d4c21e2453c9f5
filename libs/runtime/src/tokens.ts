/** Injection tokens for what the entry points open before Nest starts. */
export const DATABASE = Symbol('DATABASE');
export const EVENT_LOG = Symbol('EVENT_LOG');
