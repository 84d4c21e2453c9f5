import { LogEvent, SubscriptionsAddRequested } from '@castlog/domain';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import {
  envelopeOf,
  EventEnvelope,
  EventLog,
  LogBatch,
  LogPosition,
  LogRecord,
  sequenceOf,
} from '../event-log.port';
import { encodeEnvelope } from '../codec/envelope.codec';

/** One adapter opened on a fresh topic or table. `reopen` opens a new adapter instance on the same
 * topic or table (a restarted process); `close` closes every instance opened, and what they use. */
export interface EventLogUnderTest {
  readonly log: EventLog;
  reopen(): Promise<EventLog>;
  close(): Promise<void>;
}

/** How long a consumer may take to receive what a case waits for. */
const DELIVERY_DEADLINE_MS = 30_000;
/** How far the log's append time may lie from this process's clock (the server's clock may differ). */
const CLOCK_TOLERANCE_MS = 60_000;
/** A checkpoint store that answers later than Kafka's first fetch would: a consumer must not deliver
 * anything of a partition before its `startFrom` has answered. (Simulated latency, not a wait.) */
const STORE_LATENCY_MS = 300;

/** The contract both event-log adapters keep: the Kafka topic and the PostgreSQL table. */
export const eventLogContract = (name: string, open: () => Promise<EventLogUnderTest>) =>
  describe(`${name} event log`, () => {
    let under: EventLogUnderTest;
    let log: EventLog;

    beforeEach(async () => {
      under = await open();
      log = under.log;
    });

    afterEach(() => under.close());

    describe('append', () => {
      it('returns partition and offset for every append, in input order', async () => {
        const users = newUsers(6);
        // Keys interleaved, so a partition's messages are not adjacent in the call.
        const first = Array.from({ length: 30 }, (_, i) => deletionRequested(users[i % users.length]!));
        const second = Array.from({ length: 12 }, (_, i) =>
          deletionRequested(users[(i * 5) % users.length]!),
        );

        const firstPositions = await log.append(first);
        const between = await log.endOffsets();
        const secondPositions = await log.append(second);

        expect(firstPositions).toHaveLength(first.length);
        expect(secondPositions).toHaveLength(second.length);
        for (const position of [...firstPositions, ...secondPositions])
          expectPosition(position, log.partitions);
        expectConsecutivePerPartition(firstPositions, new Map());
        // The second call goes on where the first ended, partition by partition.
        expectConsecutivePerPartition(secondPositions, between);
        for (const [partition, next] of between) {
          expect(next).toBe(firstPositions.filter((p) => p.partition === partition).length);
        }

        // Each envelope sits exactly where its append said it would.
        const records = await readAll(log);
        expect(records).toHaveLength(first.length + second.length);
        expectFoundAt(records, [...first, ...second], [...firstPositions, ...secondPositions]);
      });

      it('gives concurrent appenders distinct positions, each holding its own envelope', async () => {
        const users = newUsers(8);
        const calls = Array.from({ length: 200 }, (_, i) =>
          i % 10 === 0
            ? [deletionRequested(users[i % 8]!), deletionRequested(users[(i + 3) % 8]!)]
            : [deletionRequested(users[i % 8]!)],
        );
        // Two writers on the same log, as two API processes would be.
        const writers = [log, await under.reopen()];

        const answers = await Promise.all(calls.map((envelopes, i) => writers[i % 2]!.append(envelopes)));

        answers.forEach((positions, i) => expect(positions).toHaveLength(calls[i]!.length));
        const envelopes = calls.flat();
        const positions = answers.flat();
        for (const position of positions) expectPosition(position, log.partitions);
        expect(new Set(positions.map(positionKey)).size).toBe(envelopes.length);
        const records = await readAll(log);
        expect(records).toHaveLength(envelopes.length);
        expectFoundAt(records, envelopes, positions);
      });

      it('rejects an event its schema refuses, and appends nothing of that call', async () => {
        const user = newUsers(1)[0]!;
        const valid = deletionRequested(user);
        const notAGuid = envelopeFor({ type: 'DeletionRequested', userId: user, guid: 'not-a-guid' });
        const typeMismatch: EventEnvelope = { ...deletionRequested(user), type: 'DeletionCompleted' };

        // Strings the read model could not store, from a producer other than the API.
        const nul = envelopeFor({
          type: 'SubscriptionsAddRequested',
          userId: user,
          items: [{ feedUrl: 'https://example.com/\u0000', candidateGuid: randomUUID() }],
        });
        const loneSurrogate = { ...deletionRequested(user), requestId: 'r-\ud800' };

        await expect(log.append([valid, notAGuid])).rejects.toThrow(/DeletionRequested/);
        await expect(log.append([typeMismatch])).rejects.toThrow(/DeletionCompleted/);
        await expect(log.append([nul])).rejects.toThrow(/U\+0000 or an unpaired surrogate/);
        await expect(log.append([loneSurrogate])).rejects.toThrow(/U\+0000 or an unpaired surrogate/);

        const end = await log.endOffsets();
        expect([...end.values()].every((next) => next === 0)).toBe(true);
        // A valid append afterwards still goes, and reading finds only it.
        const [position] = await log.append([valid]);
        expectFoundAt(await readAll(log), [valid], [position!]);
      });
    });

    describe('consume', () => {
      it('delivers one key in order, from one partition', async () => {
        const users = newUsers(5);
        const appended = new Map<string, { envelopes: EventEnvelope[]; positions: LogPosition[] }>(
          users.map((user) => [user, { envelopes: [], positions: [] }]),
        );
        const total = users.length * 20;
        // Consuming from the start before anything is appended: records arrive as they are written.
        const delivery = consumeUntil(
          log,
          { group: newGroup(), startFrom: async () => 0 },
          `${total} records`,
          (records) => records.length >= total,
        );
        await delivery.running;
        for (let round = 0; round < 10; round += 1) {
          // Users append concurrently (group commit mixes them); each user's calls follow each other.
          await Promise.all(
            users.map(async (user) => {
              const envelopes = [deletionRequested(user), deletionRequested(user)];
              const positions = await log.append(envelopes);
              appended.get(user)!.envelopes.push(...envelopes);
              appended.get(user)!.positions.push(...positions);
            }),
          );
        }
        const records = await delivery.done;

        expect(records).toHaveLength(total);
        for (const [user, { envelopes, positions }] of appended) {
          const partition = positions[0]!.partition;
          expect(positions.every((p) => p.partition === partition)).toBe(true);
          const ofUser = records.filter((record) => record.key === user);
          expect(ofUser.map((record) => record.partition)).toEqual(envelopes.map(() => partition));
          expect(ofUser.map((record) => record.eventId)).toEqual(envelopes.map((e) => e.eventId));
          expect(ofUser.map((record) => record.offset)).toEqual(positions.map((p) => p.offset));
        }
      });

      it('redelivers from a stored position after reopening, and nothing before it', async () => {
        const { envelopes, positions } = await fillEveryPartition(log, 4);
        const end = await log.endOffsets();
        const group = newGroup();
        const before = await consumeUntil(
          log,
          { group, startFrom: async () => 0 },
          'every record',
          (records) => reachedEnd(records, end),
        ).done;
        expect(before).toHaveLength(envelopes.length);
        // The reader stored its position in the middle of each partition, then the process stopped.
        const stored = new Map([...end].map(([partition, next]) => [partition, Math.floor(next / 2)]));
        await log.close();

        const reopened = await under.reopen();
        expect(reopened.partitions).toBe(log.partitions);
        const after = await consumeUntil(
          reopened,
          { group, startFrom: slowStore(stored) },
          'redelivery from the stored positions',
          (records) => reachedEnd(records, end),
        ).done;

        expectExactlyFrom(after, stored, end);
        expectFoundAt(after, ...from(stored, envelopes, positions));
      });

      it('starts a new reader at its stored position, not at the beginning', async () => {
        const { envelopes, positions } = await fillEveryPartition(log, 4);
        const end = await log.endOffsets();
        const stored = new Map([...end].map(([partition, next]) => [partition, next - 2]));

        const records = await consumeUntil(
          log,
          { group: newGroup(), startFrom: slowStore(stored) },
          'delivery from the stored positions',
          (received) => reachedEnd(received, end),
        ).done;

        expectExactlyFrom(records, stored, end);
        expectFoundAt(records, ...from(stored, envelopes, positions));
      });
      it('retries a failing handler and an unreachable position store until they succeed: every record applied once, in order', async () => {
        const { envelopes, positions } = await fillEveryPartition(log, 4);
        const end = await log.endOffsets();
        // The caller's store: the next offset per partition, moved only by a batch that applies.
        const stored = new Map<number, number>();
        const applied: LogRecord[] = [];
        let storeFailures = 0;
        let handlerFailures = 0;
        const errors: unknown[] = [];
        const recoveries: number[] = [];
        let reached!: () => void;
        const done = new Promise<void>((resolve) => (reached = resolve));
        const consumer = await log.consume({
          group: newGroup(),
          startFrom: async (partition) => {
            if (storeFailures < 2) {
              storeFailures += 1;
              throw new Error('store out of reach');
            }
            return stored.get(partition) ?? 0;
          },
          handle: async (batch) => {
            if (handlerFailures < 3) {
              handlerFailures += 1;
              throw new Error('handler failed before applying anything');
            }
            let next = stored.get(batch.partition) ?? 0;
            for (const record of batch.records) {
              if (record.offset < next) continue;
              applied.push(record);
              next = record.offset + 1;
            }
            stored.set(batch.partition, next);
            if ([...end].every(([partition, high]) => (stored.get(partition) ?? 0) >= high)) reached();
          },
          onError: (error) => errors.push(error),
          onRecovered: () => recoveries.push(errors.length),
        });
        try {
          await withDeadline(done, 'every record applied despite the failures');
        } finally {
          await consumer.stop();
        }

        expect(handlerFailures).toBe(3);
        expect(errors.length).toBeGreaterThanOrEqual(3);
        expectExactlyFrom(applied, new Map(), end);
        expectFoundAt(applied, envelopes, positions);
        // Recovered, and last after the last failure.
        expect(recoveries.length).toBeGreaterThan(0);
        expect(recoveries[recoveries.length - 1]).toBe(errors.length);
      });

      it('says it has recovered once the position store answers again, though no record arrives', async () => {
        let storeFailures = 0;
        const errors: unknown[] = [];
        let recovered!: () => void;
        const recovery = new Promise<void>((resolve) => (recovered = resolve));
        const consumer = await log.consume({
          group: newGroup(),
          startFrom: async () => {
            if (storeFailures < 2) {
              storeFailures += 1;
              throw new Error('store out of reach');
            }
            return 0;
          },
          handle: async () => {
            throw new Error('no record was appended');
          },
          onError: (error) => errors.push(error),
          onRecovered: () => recovered(),
        });
        try {
          await withDeadline(recovery, 'onRecovered after the store failures');
        } finally {
          await consumer.stop();
        }
        expect(storeFailures).toBe(2);
        expect(errors.map((error) => (error as Error).message)).toEqual(
          expect.arrayContaining(['store out of reach']),
        );
        expect(errors.map((error) => (error as Error).message)).not.toContain('no record was appended');
      });
    });

    describe('readToEnd', () => {
      it('replays from zero everything appended, and stops at the end offsets taken at the start', async () => {
        expect(await readAll(log)).toEqual([]);
        const users = newUsers(8);
        const envelopes = Array.from({ length: 40 }, (_, i) => deletionRequested(users[i % users.length]!));
        const positions = await log.append(envelopes);
        const end = await log.endOffsets();
        expect([...end.keys()].sort((a, b) => a - b)).toEqual(range(0, log.partitions));
        for (const [partition, next] of end) {
          expect(next).toBe(positions.filter((p) => p.partition === partition).length);
        }

        const records: LogRecord[] = [];
        const late: EventEnvelope[] = [];
        await log.readToEnd(async (batch) => {
          expectBatch(batch);
          records.push(...batch.records);
          if (late.length === 0) {
            late.push(...users.map((user) => deletionRequested(user)));
            await log.append(late);
          }
        });

        // Everything appended before the call, once each, from offset 0 on; nothing appended during it.
        expectExactlyFrom(records, new Map(), end);
        expect(records).toHaveLength(envelopes.length);
        expectFoundAt(records, envelopes, positions);
      });

      it('reads from a given position to the end', async () => {
        const { envelopes, positions } = await fillEveryPartition(log, 3);
        const end = await log.endOffsets();
        const start = new Map([...end].map(([partition]) => [partition, 2]));

        const records = await readAll(log, start);

        expectExactlyFrom(records, start, end);
        expectFoundAt(records, ...from(start, envelopes, positions));
      });
    });

    describe('records', () => {
      it('round-trip type, version, event id and request id headers, the key, the value and the append time', async () => {
        const [alice, bob] = newUsers(2) as [string, string];
        const events: LogEvent[] = [
          {
            type: 'SubscriptionsAddRequested',
            userId: alice,
            items: [
              { feedUrl: 'https://a.example/rss?q=ü&x="y"', guid: randomUUID(), candidateGuid: randomUUID() },
              { feedUrl: 42, candidateGuid: randomUUID() },
              { feedUrl: 'https://b.example/podcast.xml', guid: 'not a guid', candidateGuid: randomUUID() },
            ],
          },
          {
            type: 'SubscriptionUpdateRequested',
            userId: alice,
            guid: randomUUID(),
            newFeedUrl: 'https://c.example/feed',
            newGuid: randomUUID(),
            isSubscribed: false,
          },
          { type: 'DeletionRequested', userId: bob, guid: randomUUID() },
          { type: 'DeletionCompleted', userId: bob, deletionId: 7, deletedAt: 1_732_400_000_123 },
          {
            type: 'DeletionFailed',
            userId: alice,
            deletionId: 8,
            reason: 'cascade rolled back: "lock timeout" ✗',
          },
        ];
        const envelopes = events.map(envelopeFor);

        const before = Date.now();
        const positions: LogPosition[] = [];
        // Several calls in turn, so the append times may differ.
        for (const call of [envelopes.slice(0, 2), envelopes.slice(2, 4), envelopes.slice(4)]) {
          positions.push(...(await log.append(call)));
        }
        const after = Date.now();

        const read = await readAll(log);
        expect(read).toHaveLength(envelopes.length);
        envelopes.forEach((envelope, i) => {
          const record = read.find((r) => r.eventId === envelope.eventId);
          expect(record).toEqual({ ...envelope, ...positions[i], timestamp: expect.any(Number) });
          expect(Number.isSafeInteger(record!.timestamp)).toBe(true);
          expect(record!.timestamp).toBeGreaterThanOrEqual(before - CLOCK_TOLERANCE_MS);
          expect(record!.timestamp).toBeLessThanOrEqual(after + CLOCK_TOLERANCE_MS);
        });
        for (const partition of range(0, log.partitions)) {
          const times = read.filter((r) => r.partition === partition).map((r) => r.timestamp);
          expect(times).toEqual([...times].sort((a, b) => a - b));
        }

        // The time is the log's, stored once: a consumer (another reader, later) reads the same records.
        const consumed = await consumeUntil(
          log,
          { group: newGroup(), startFrom: async () => 0 },
          'every record',
          (records) => records.length >= envelopes.length,
        ).done;
        expect(byPosition(consumed)).toEqual(byPosition(read));
      });

      it('accepts the largest event a 1 MiB request produces, and reads it back intact', async () => {
        const user = newUsers(1)[0]!;
        const event = largestAddRequest(user);
        expect(Buffer.byteLength(JSON.stringify(event))).toBeGreaterThan(1024 * 1024);
        const envelope = envelopeFor(event);
        const neighbour = deletionRequested(user);

        const positions = await log.append([envelope, neighbour]);

        const read = await readAll(log);
        expectFoundAt(read, [envelope, neighbour], positions);
        expect(read.find((r) => r.eventId === envelope.eventId)?.value).toEqual(event);
        const consumed = await consumeUntil(
          log,
          { group: newGroup(), startFrom: async () => 0 },
          'the large record and its neighbour',
          (records) => records.length >= 2,
        ).done;
        expect(consumed.find((r) => r.eventId === envelope.eventId)?.value).toEqual(event);
        expectFoundAt(consumed, [envelope, neighbour], positions);
      });

      it('accepts a burst of the largest events for one key, sized in bytes, not characters', async () => {
        const user = newUsers(1)[0]!;
        // Feed URLs of 3-byte characters: each event is still about 1.1 MiB, in a third of the characters.
        const envelopes = Array.from({ length: 12 }, () => envelopeFor(largestAddRequest(user, '€')));
        expect(Buffer.byteLength(JSON.stringify(envelopes[0]!.value))).toBeGreaterThan(1024 * 1024);

        const positions = (await Promise.all(envelopes.map((envelope) => log.append([envelope])))).flat();

        const read = await readAll(log);
        expectFoundAt(read, envelopes, positions);
        for (const envelope of envelopes) {
          expect(read.find((r) => r.eventId === envelope.eventId)?.value).toEqual(envelope.value);
        }
      });

      it('hands the largest events over to a consumer and a reader among many small ones in every partition', async () => {
        // A Kafka fetch asks each partition for about three of these events (4 MiB) and for 16 MiB in
        // all: a partition's share of a fetch ends at or within one of them, here while other
        // partitions still hold small events behind and after it.
        const small = (count: number) => newUsers(count).map((user) => deletionRequested(user));
        const large = newUsers(6).map((user) => envelopeFor(largestAddRequest(user)));
        const before = small(20_000);
        const after = small(20_000);
        const positions = [
          ...(await log.append(before)),
          ...(await Promise.all(large.map((envelope) => log.append([envelope])))).flat(),
          ...(await log.append(after)),
        ];
        const envelopes = [...before, ...large, ...after];

        expectFoundAt(await readAll(log), envelopes, positions);
        const ids = new Set(envelopes.map((envelope) => envelope.eventId));
        const consumed = await consumeUntil(
          log,
          { group: newGroup(), startFrom: async () => 0 },
          'every record of the test',
          (records) => records.filter((record) => ids.has(record.eventId)).length >= envelopes.length,
        ).done;
        expectFoundAt(consumed, envelopes, positions);
        for (const envelope of large) {
          expect(consumed.find((r) => r.eventId === envelope.eventId)?.value).toEqual(envelope.value);
        }
      }, 120_000);

      it('accepts the largest event a gpodder.net upload produces, larger than a fetch asks of a partition, among small ones', async () => {
        const envelope = envelopeFor(largestUploadRequest(newUsers(1)[0]!));
        expect(encodeEnvelope(envelope).bytes).toBeGreaterThan(FETCH_SHARE_BYTES);
        const before = newUsers(100).map((user) => deletionRequested(user));
        const after = newUsers(100).map((user) => deletionRequested(user));
        const positions = [
          ...(await log.append(before)),
          ...(await log.append([envelope])),
          ...(await log.append(after)),
        ];
        const envelopes = [...before, envelope, ...after];

        const read = await readAll(log);
        expectFoundAt(read, envelopes, positions);
        expect(read.find((r) => r.eventId === envelope.eventId)?.value).toEqual(envelope.value);
        const ids = new Set(envelopes.map(({ eventId }) => eventId));
        const consumed = await consumeUntil(
          log,
          { group: newGroup(), startFrom: async () => 0 },
          'the upload and its neighbours',
          (records) => records.filter((record) => ids.has(record.eventId)).length >= envelopes.length,
        ).done;
        expectFoundAt(consumed, envelopes, positions);
        expect(consumed.find((r) => r.eventId === envelope.eventId)?.value).toEqual(envelope.value);
      }, 120_000);

      it('gives distinct positive sequence numbers to all positions read', async () => {
        await fillEveryPartition(log, 3);

        const records = await readAll(log);

        const sequences = records.map((record) => sequenceOf(record, log.partitions));
        for (const sequence of sequences) {
          expect(Number.isSafeInteger(sequence)).toBe(true);
          expect(sequence).toBeGreaterThan(0);
        }
        expect(new Set(sequences).size).toBe(records.length);
      });
    });
  });

// --- builders -----------------------------------------------------------------------------------

const newUsers = (count: number): string[] => Array.from({ length: count }, () => `user-${randomUUID()}`);

const newGroup = (): string => `contract-${randomUUID()}`;

const envelopeFor = (value: LogEvent): EventEnvelope => envelopeOf(value, `req-${randomUUID()}`);

const deletionRequested = (userId: string): EventEnvelope =>
  envelopeFor({ type: 'DeletionRequested', userId, guid: randomUUID() });

/** 1000 items whose feed URLs are about 1000 bytes each (some not ASCII), as a POST of 1 MiB
 * produces: about 1.1 MiB of JSON, above Kafka's default message limit of 1 MB. */
const largestAddRequest = (userId: string, filler = 'x'): SubscriptionsAddRequested => ({
  type: 'SubscriptionsAddRequested',
  userId,
  items: Array.from({ length: 1000 }, (_, i) => {
    const path = `https://feeds.example/${i}/${i % 10 === 0 ? 'épisodes-ß/' : ''}`;
    const bytes = 1000 - Buffer.byteLength(path);
    return {
      feedUrl: path + filler.repeat(Math.floor(bytes / Buffer.byteLength(filler))),
      ...(i % 2 === 0 ? { guid: randomUUID() } : {}),
      candidateGuid: randomUUID(),
    };
  }),
});

/** What the Kafka adapter's fetch asks of each partition (FETCH_BYTES_PER_PARTITION). */
const FETCH_SHARE_BYTES = 4 * 1024 * 1024;

/** 10,000 added URLs of about 420 bytes, as a gpodder.net upload of 4 MiB (UPLOAD_BODY_LIMIT_BYTES)
 * produces: about 4.65 MiB with the candidate guids (docs/operations.md, "Message sizes"). */
const largestUploadRequest = (userId: string): LogEvent => ({
  type: 'GpodderUploadRequested',
  userId,
  deviceId: 'phone',
  add: Array.from({ length: 10_000 }, (_, i) => ({
    feedUrl: `https://feeds.example/${i}/`.padEnd(419, 'x'),
    candidateGuid: randomUUID(),
  })),
  remove: [],
});

/** Appends calls of fresh keys until every partition holds at least `perPartition` records. */
async function fillEveryPartition(
  log: EventLog,
  perPartition: number,
): Promise<{ envelopes: EventEnvelope[]; positions: LogPosition[] }> {
  const envelopes: EventEnvelope[] = [];
  const positions: LogPosition[] = [];
  const counts = new Map<number, number>();
  for (let round = 0; round < 50; round += 1) {
    if (range(0, log.partitions).every((partition) => (counts.get(partition) ?? 0) >= perPartition)) {
      return { envelopes, positions };
    }
    const call = newUsers(log.partitions * 2).map((user) => deletionRequested(user));
    const answered = await log.append(call);
    envelopes.push(...call);
    positions.push(...answered);
    for (const { partition } of answered) counts.set(partition, (counts.get(partition) ?? 0) + 1);
  }
  throw new Error(
    `after 50 calls some partition still holds fewer than ${perPartition} records: ${[...counts]}`,
  );
}

// --- readers ------------------------------------------------------------------------------------

/** Every record from `from` (default 0) to the end, through readToEnd. */
async function readAll(log: EventLog, from?: Map<number, number>): Promise<LogRecord[]> {
  const records: LogRecord[] = [];
  await log.readToEnd(async (batch) => {
    expectBatch(batch);
    records.push(...batch.records);
  }, from);
  return records;
}

/** A position store answering after a delay, like a database would. */
const slowStore =
  (offsets: Map<number, number>) =>
  async (partition: number): Promise<number> => {
    await delay(STORE_LATENCY_MS);
    return offsets.get(partition) ?? 0;
  };

/** Consumes until `enough(records)` holds, then stops the consumer. `running` resolves once the
 * consumer has started; `done` answers the records received, or fails at the deadline naming `what`. */
function consumeUntil(
  log: EventLog,
  options: { group: string; startFrom: (partition: number) => Promise<number> },
  what: string,
  enough: (records: readonly LogRecord[]) => boolean,
): { running: Promise<void>; done: Promise<LogRecord[]> } {
  const records: LogRecord[] = [];
  let reached!: () => void;
  let failed!: (error: unknown) => void;
  const outcome = new Promise<void>((resolve, reject) => {
    reached = resolve;
    failed = reject;
  });
  const consumer = log.consume({
    ...options,
    handle: async (batch) => {
      expectBatch(batch);
      records.push(...batch.records);
      if (enough(records)) reached();
    },
    onError: (error) => failed(error),
  });
  const done = (async () => {
    const running = await consumer;
    try {
      await withDeadline(outcome, () => `${what} (got ${records.length})`);
      return records;
    } finally {
      await running.stop();
    }
  })();
  return { running: consumer.then(() => undefined), done };
}

/** Resolves with `promise`, or fails naming `what` after DELIVERY_DEADLINE_MS. */
async function withDeadline<T>(promise: Promise<T>, what: string | (() => string)): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `timed out after ${DELIVERY_DEADLINE_MS} ms waiting for ${typeof what === 'string' ? what : what()}`,
          ),
        ),
      DELIVERY_DEADLINE_MS,
    );
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** True when `records` include the last record before `end` in every partition. */
const reachedEnd = (records: readonly LogRecord[], end: Map<number, number>): boolean =>
  [...end].every(
    ([partition, next]) =>
      next === 0 || records.some((r) => r.partition === partition && r.offset === next - 1),
  );

// --- expectations -------------------------------------------------------------------------------

const positionKey = ({ partition, offset }: LogPosition): string => `${partition}:${offset}`;

const range = (from: number, to: number): number[] =>
  Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);

const byPosition = (records: readonly LogRecord[]): LogRecord[] =>
  [...records].sort((a, b) => a.partition - b.partition || a.offset - b.offset);

function expectPosition(position: LogPosition, partitions: number): void {
  expect(
    Number.isInteger(position.partition) && position.partition >= 0 && position.partition < partitions,
  ).toBe(true);
  expect(Number.isSafeInteger(position.offset) && position.offset >= 0).toBe(true);
}

/** A batch holds records of its own partition, in increasing offset order. */
function expectBatch(batch: LogBatch): void {
  expect(batch.records.every((record) => record.partition === batch.partition)).toBe(true);
  const offsets = batch.records.map((record) => record.offset);
  expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
}

/** Within one call, each partition's positions run on from `start` (default 0) with no gap, in input order. */
function expectConsecutivePerPartition(positions: readonly LogPosition[], start: Map<number, number>): void {
  const partitions = new Set(positions.map((p) => p.partition));
  for (const partition of partitions) {
    const offsets = positions.filter((p) => p.partition === partition).map((p) => p.offset);
    const first = start.get(partition) ?? 0;
    expect(offsets).toEqual(range(first, first + offsets.length));
  }
}

/** Each envelope is read back, with its key, headers and value, at the position its append answered. */
function expectFoundAt(
  records: readonly LogRecord[],
  envelopes: readonly EventEnvelope[],
  positions: readonly LogPosition[],
): void {
  const at = new Map(records.map((record) => [positionKey(record), record]));
  const missing = envelopes.filter((envelope, i) => {
    const record = at.get(positionKey(positions[i]!));
    return !record || !(record.eventId === envelope.eventId && record.key === envelope.key);
  });
  expect(missing.map((e) => e.eventId)).toEqual([]);
}

/** The envelopes (and their positions) at or after `start` in their partition. */
function from(
  start: Map<number, number>,
  envelopes: readonly EventEnvelope[],
  positions: readonly LogPosition[],
): [EventEnvelope[], LogPosition[]] {
  const kept = positions
    .map((p, i) => [p, i] as const)
    .filter(([p]) => p.offset >= (start.get(p.partition) ?? 0));
  return [kept.map(([, i]) => envelopes[i]!), kept.map(([p]) => p)];
}

/** In each partition the records run exactly from `from` (default 0) to `end`, once each, in order. */
function expectExactlyFrom(
  records: readonly LogRecord[],
  from: Map<number, number>,
  end: Map<number, number>,
): void {
  for (const [partition, next] of end) {
    const offsets = records.filter((r) => r.partition === partition).map((r) => r.offset);
    expect({ partition, offsets }).toEqual({ partition, offsets: range(from.get(partition) ?? 0, next) });
  }
  expect(records.every((r) => end.has(r.partition))).toBe(true);
}
