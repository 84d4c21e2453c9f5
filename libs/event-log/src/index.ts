export * from './event-log.port';
export * from './group-commit';
export * from './codec/envelope.codec';
export * from './kafka/kafka-event-log.adapter';
export * from './postgres/postgres-event-log.adapter';
export * from './postgres/migrations/1732400000001-event-log-table';
