export * from './backoff';
export * from './health';
export * from './log';
export * from './notification-listener';
export * from './postgres';
export * from './recovery-probe';
export * from './unavailable';
export * from './wakeup';
