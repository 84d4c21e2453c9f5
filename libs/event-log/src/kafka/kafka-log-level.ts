import { logLevel } from 'kafkajs';
import { errorCodes } from 'kafkajs/src/protocol/error';

/** The messages of the protocol errors Kafka calls retriable (a partition's leader moved, a
 * coordinator still loading): kafkajs logs an answer carrying one at error, and the request is
 * retried, by kafkajs or by castlog's own loops (the end offsets'). */
const RETRIABLE_ERRORS = new Set(errorCodes.filter((error) => error.retriable).map((error) => error.message));

/** kafkajs logs a failed send at error before each of its retries. */
const SEND_RETRIED = 'Failed to send messages: ';

/** The level castlog logs a line of kafkajs at (the levels it passes on: error and warn). A failed
 * send kafkajs retries, and an answer carrying a retriable error, are warnings, as castlog's own lost
 * connections are: a broker that restarted or moved a leader leaves a few and heals; what still
 * fails after the retries reaches castlog, which answers 503 and reports the dependency down.
 * kafkajs's other errors (a request that timed out, a consumer it restarts, a connection error)
 * stay errors. */
export function kafkaLogLevel(
  level: logLevel,
  message: string,
  extra: Readonly<Record<string, unknown>>,
): 'error' | 'warn' {
  if (level !== logLevel.ERROR) return 'warn';
  const retried = message.startsWith(SEND_RETRIED) || RETRIABLE_ERRORS.has(String(extra.error));
  return retried ? 'warn' : 'error';
}
