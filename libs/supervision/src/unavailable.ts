/** Whether `error` says a dependency (PostgreSQL, Kafka) cannot be reached or went away — a
 * condition that passes by itself — rather than that the request or the code is wrong. Such
 * errors are answered 503 with Retry-After, never 500, and never recorded as a result. */
export function isUnavailableError(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 5; depth += 1) {
    if (isUnavailableItself(cause)) return true;
    const next = cause as { driverError?: unknown; cause?: unknown; originalError?: unknown };
    cause = next.driverError ?? next.originalError ?? next.cause;
  }
  return false;
}

/** PostgreSQL SQLSTATEs of lost or refused connections: class 08 (connection exception), 53300
 * (too many connections), 57P01–57P03 (administrator shutdown, crash shutdown, cannot connect now). */
const POSTGRES_UNAVAILABLE = /^(08...|53300|57P0[123])$/;
const NODE_UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** What pg and pg-pool throw without a code when a connection ends or cannot be had in time. */
const PG_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /is not queryable/,
  /^Client was closed and is not queryable/,
  /^Cannot use a pool after calling end on the pool/,
];
/** kafkajs error names that mean the cluster is out of reach (its retriable errors count too). */
const KAFKA_UNAVAILABLE = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSNumberOfRetriesExceeded',
  'KafkaJSBrokerNotFound',
  'KafkaJSLockTimeout',
  'KafkaJSMetadataNotLoaded',
]);

function isUnavailableItself(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, name, message, retriable } = error as {
    code?: unknown;
    name?: unknown;
    message?: unknown;
    retriable?: unknown;
  };
  if (typeof code === 'string' && (POSTGRES_UNAVAILABLE.test(code) || NODE_UNAVAILABLE.has(code)))
    return true;
  if (typeof name === 'string' && name.startsWith('KafkaJS'))
    return KAFKA_UNAVAILABLE.has(name) || retriable === true;
  return typeof message === 'string' && PG_MESSAGES.some((pattern) => pattern.test(message));
}
