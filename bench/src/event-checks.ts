/** `node dist/bench/src/event-checks.js [rounds]`: Node's time to check events as the Kafka log
 * does, without Kafka: an append's check of a POST of one feed and of 100 feeds (`checkEvent` on
 * the value and the JSON about to be written), and the projector's decoding of the catch-up mix's
 * events (`decodeValue` on the record's JSON). Prints the microseconds per event of each round and
 * their median. It measures one build: compare two commits by running each, alternating. */
import { LOG_EVENT_VERSION, LogEvent } from '@castlog/domain';
import { checkEvent, decodeValue, encodeValue, EventHeaders } from '@castlog/event-log';
import { randomUUID } from 'node:crypto';
import { EventMix } from './event-mix';
import { formatSpread, spreadOf } from './stats';

const headersOf = (value: LogEvent): EventHeaders => ({
  type: value.type,
  version: LOG_EVENT_VERSION,
  eventId: randomUUID(),
  requestId: randomUUID(),
});

const addOf = (feeds: number, userId: string): LogEvent => ({
  type: 'SubscriptionsAddRequested',
  userId,
  items: Array.from({ length: feeds }, (_, i) => ({
    feedUrl: `https://feeds.example.com/${userId}/${i}.xml`,
    candidateGuid: randomUUID(),
  })),
});

interface Case {
  readonly name: string;
  readonly events: number;
  readonly run: () => void;
}

/** An append's check of `count` distinct adds of `feeds` feeds each. */
const appending = (name: string, feeds: number, count: number): Case => {
  const values = Array.from({ length: count }, (_, i) => addOf(feeds, `user-${i}`));
  const headers = values.map(headersOf);
  return {
    name,
    events: count,
    run: () => values.forEach((value, i) => checkEvent(headers[i]!, value, encodeValue(value))),
  };
};

/** The projector's decoding of the catch-up mix's events, from their JSON. */
const decoding = (count: number): Case => {
  const envelopes = new EventMix(count / 50, 7).next(count);
  const texts = envelopes.map((envelope) => encodeValue(envelope.value));
  return {
    name: `decoding ${count.toLocaleString('en-US')} events of the catch-up mix`,
    events: count,
    run: () => envelopes.forEach((envelope, i) => decodeValue(envelope, texts[i]!)),
  };
};

const main = (): void => {
  const rounds = Number(process.argv[2] ?? 7);
  const cases = [
    appending('appending a POST of one feed', 1, 100_000),
    appending('appending a POST of 100 feeds', 100, 2_000),
    decoding(100_000),
  ];
  for (const { name, events, run } of cases) {
    run(); // warm-up: compiled and optimised before the clock runs
    const perEvent: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const started = process.hrtime.bigint();
      run();
      perEvent.push(Number(process.hrtime.bigint() - started) / 1_000 / events);
    }
    console.log(
      `${name}: ${formatSpread(spreadOf(perEvent))} µs an event (rounds: ${perEvent.map((us) => us.toFixed(2)).join(', ')})`,
    );
  }
};

main();
