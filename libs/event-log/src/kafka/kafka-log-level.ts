import { logLevel } from 'kafkajs';
import { errorCodes } from 'kafkajs/src/protocol/error';

/** The messages of the protocol errors Kafka calls retriable (a partition's leader moved, a
 * coordinator still loading): kafkajs logs such an answer at error, then retries it. */
const RETRIABLE_ERRORS = new Set(errorCodes.filter((error) => error.retriable).map((error) => error.message));

/** kafkajs logs a failed send at error before each of its retries. */
const SEND_RETRIED = 'Failed to send messages: ';

/** The level castlog logs a line of kafkajs at (the levels it passes on: error and warn). What kafkajs
 * retries by itself is a warning, as castlog's own lost connections are: a broker that restarted or
 * moved a leader leaves a few of them and heals; what still fails after the retries reaches castlog,
 * which answers 503 and reports the dependency down. */
export function kafkaLogLevel(
  level: logLevel,
  message: string,
  extra: Readonly<Record<string, unknown>>,
): 'error' | 'warn' {
  if (level !== logLevel.ERROR) return 'warn';
  const retried = message.startsWith(SEND_RETRIED) || RETRIABLE_ERRORS.has(String(extra.error));
  return retried ? 'warn' : 'error';
}
