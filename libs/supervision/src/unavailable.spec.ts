import { isUnavailableError } from './unavailable';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isUnavailableError', () => {
  it.each([
    [
      'a terminated backend (57P01)',
      withCode('57P01', 'terminating connection due to administrator command'),
    ],
    ['a server starting up (57P03)', withCode('57P03', 'the database system is starting up')],
    ['a connection exception (08006)', withCode('08006')],
    ['too many connections (53300)', withCode('53300')],
    ['a refused connection', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['a reset connection', withCode('ECONNRESET')],
    ['pg ending a connection', new Error('Connection terminated unexpectedly')],
    ['pg-pool waiting too long', new Error('timeout exceeded when trying to connect')],
    ['a broken client', new Error('Client has encountered a connection error and is not queryable')],
    [
      'a TypeORM QueryFailedError around one',
      Object.assign(new Error('query failed'), { driverError: withCode('57P01') }),
    ],
    [
      'kafkajs giving up',
      Object.assign(new Error('retries exceeded'), { name: 'KafkaJSNumberOfRetriesExceeded' }),
    ],
    [
      'a retriable kafkajs error',
      Object.assign(new Error('leader moved'), { name: 'KafkaJSProtocolError', retriable: true }),
    ],
    ['a cause chain', Object.assign(new Error('append failed'), { cause: withCode('ECONNREFUSED') })],
  ])('holds for %s', (_name, error) => {
    expect(isUnavailableError(error)).toBe(true);
  });

  it.each([
    ['a unique violation (23505)', withCode('23505', 'duplicate key value')],
    ['a syntax error (42601)', withCode('42601')],
    [
      'a non-retriable kafkajs error',
      Object.assign(new Error('too large'), { name: 'KafkaJSProtocolError', retriable: false }),
    ],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'x')")],
    ['a string', 'Connection terminated'],
    ['nothing', undefined],
  ])('does not hold for %s', (_name, error) => {
    expect(isUnavailableError(error)).toBe(false);
  });
});
