import { Kafka, logLevel } from 'kafkajs';
import { LogFn } from '@castlog/supervision';
import { kafkaLogLevel } from './kafka-log-level';
import { KafkaEventLogOptions, RETRIES } from './kafka-options';

/** kafkajs warns of it at every start of an idempotent producer whose retries are limited. They are
 * limited on purpose, so that an append fails and the request is answered 503 rather than kept
 * waiting: said as what it means here, at info. */
const LIMITED_RETRIES_WARNING = 'Limiting retries for the idempotent producer may invalidate EoS guarantees';
const LIMITED_RETRIES_NOTE =
  `kafka: appends are retried ${RETRIES} times; one that still fails is answered 503 and may be in the log ` +
  '(it then applies once; see "The Kafka broker restarted" in docs/operations.md)';

/** The kafkajs client, its warnings and errors written to `log`. */
export function kafkaClient(options: KafkaEventLogOptions, log: LogFn): Kafka {
  return new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log: entry }) => {
        const { message, ...extra } = entry;
        if (message === LIMITED_RETRIES_WARNING) log('info', LIMITED_RETRIES_NOTE);
        else if (level <= logLevel.WARN)
          log(kafkaLogLevel(level, message, extra), `kafka: ${message}`, extra);
      },
    retry: { retries: RETRIES, initialRetryTime: 200, maxRetryTime: 5000 },
  });
}
