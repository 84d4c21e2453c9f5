import { logLevel } from 'kafkajs';
import { kafkaLogLevel } from './kafka-log-level';

describe('kafkaLogLevel', () => {
  it('logs at warn a failed send kafkajs retries and an answer carrying an error Kafka calls retriable', () => {
    // As kafkajs logged them once a paused broker went on again.
    expect(
      kafkaLogLevel(
        logLevel.ERROR,
        'Failed to send messages: This server is not the leader for that topic-partition',
        { retryCount: 0, retryTime: 282 },
      ),
    ).toBe('warn');
    expect(
      kafkaLogLevel(logLevel.ERROR, 'Response ListOffsets(key: 2, version: 4)', {
        error: 'This server is not the leader for that topic-partition',
        correlationId: 7,
        size: 60,
      }),
    ).toBe('warn');
    expect(
      kafkaLogLevel(logLevel.ERROR, 'Response FindCoordinator(key: 10, version: 2)', {
        error: 'The group coordinator is not available',
      }),
    ).toBe('warn');
  });

  it('keeps at error what retrying does not cure, and passes warnings on as warnings', () => {
    expect(
      kafkaLogLevel(logLevel.ERROR, 'Response Produce(key: 0, version: 7)', {
        error: 'Not authorized to access topics: [Topic authorization failed]',
      }),
    ).toBe('error');
    expect(kafkaLogLevel(logLevel.ERROR, 'Crash: KafkaJSNonRetriableError', {})).toBe('error');
    expect(kafkaLogLevel(logLevel.WARN, 'Response without match', { correlationId: 3 })).toBe('warn');
  });
});
