export * from './time';
export * from './events/log-event';
export * from './subscriptions/subscription';
export * from './subscriptions/change';
export * from './subscriptions/outcome';
export * from './subscriptions/feed-url';
export * from './subscriptions/subscription.decider';
