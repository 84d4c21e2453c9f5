import { randomUUID } from 'node:crypto';
import { uniqueName } from '../../../../test/support/databases';
import { envelopeOf, EventEnvelope, EventLog, LogRecord } from '../event-log.port';
import { EventLogUnderTest, eventLogContract } from '../testing/event-log.contract';
import { KafkaEventLog } from './kafka-event-log.adapter';

/** A fresh topic (3 partitions unless told) on the test broker; `reopen` opens another adapter on
 * it. */
async function openKafkaLog({ partitions = 3 } = {}): Promise<EventLogUnderTest> {
  const brokers = process.env.KAFKA_BROKERS;
  if (!brokers)
    throw new Error('KAFKA_BROKERS is not set: run the tests through jest (test/infra/global-setup.ts)');
  const options = {
    brokers: brokers.split(','),
    topic: uniqueName('event_log'),
    partitions,
    replicationFactor: 1,
    clientId: 'event-log-contract',
  };
  const opened: EventLog[] = [];
  const openOne = async () => {
    const log = await KafkaEventLog.open(options);
    opened.push(log);
    return log;
  };
  return {
    log: await openOne(),
    reopen: openOne,
    close: async () => {
      await Promise.all(opened.map((log) => log.close()));
    },
  };
}

eventLogContract('kafka', () => openKafkaLog());

/** About 8 KB of JSON: five feeds of long URLs. */
const sizeableAdd = (userId: string): EventEnvelope =>
  envelopeOf(
    {
      type: 'SubscriptionsAddRequested',
      userId,
      items: Array.from({ length: 5 }, (_, i) => ({
        feedUrl: `https://feeds.example/${i}/${'x'.repeat(1500)}`,
        candidateGuid: randomUUID(),
      })),
    },
    `req-${randomUUID()}`,
  );

describe('kafka event log, a consumer far behind', () => {
  let underTest: EventLogUnderTest;
  beforeAll(async () => {
    underTest = await openKafkaLog({ partitions: 4 });
  });
  afterAll(async () => {
    await underTest?.close();
  });

  it('fetches ahead: while one partition is handled, the next batches of the others are handed over, each partition one batch after another in offset order', async () => {
    const { log } = underTest;
    // About 12 MiB a partition: a fetch asks 4 MiB of each, so each is handed over in several batches.
    const envelopes = Array.from({ length: 6_000 }, () => sizeableAdd(`user-${randomUUID()}`));
    for (let start = 0; start < envelopes.length; start += 500)
      await log.append(envelopes.slice(start, start + 500));
    const end = await log.endOffsets();

    const handled = new Map<number, (readonly LogRecord[])[]>();
    const active = new Set<number>();
    const overlaps: number[] = [];
    let held: number | undefined;
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let wake: () => void = () => undefined;
    const consumer = await log.consume({
      group: `far-behind-${randomUUID()}`,
      startFrom: async () => 0,
      handle: async (batch) => {
        if (active.has(batch.partition)) overlaps.push(batch.partition);
        active.add(batch.partition);
        try {
          // The first partition handed over is held until the others have moved on.
          held ??= batch.partition;
          if (batch.partition === held) await released;
          handled.set(batch.partition, [...(handled.get(batch.partition) ?? []), batch.records]);
        } finally {
          active.delete(batch.partition);
          wake();
        }
      },
    });
    const untilHandled = async (what: string, done: () => boolean) => {
      const deadline = Date.now() + 30_000;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 200);
        });
      }
    };
    try {
      await untilHandled('a second batch of a partition not held', () =>
        [...handled].some(([partition, batches]) => partition !== held && batches.length >= 2),
      );
      expect(handled.get(held!)).toBeUndefined();
      release();
      await untilHandled('every record', () =>
        [...end].every(
          ([partition, next]) =>
            (handled.get(partition) ?? []).reduce((sum, records) => sum + records.length, 0) >= next,
        ),
      );
    } finally {
      release();
      await consumer.stop();
    }

    expect(overlaps).toEqual([]);
    for (const [partition, next] of end) {
      const offsets = (handled.get(partition) ?? []).flat().map((record) => record.offset);
      expect(offsets).toEqual(Array.from({ length: next }, (_, i) => i));
    }
  });
});
