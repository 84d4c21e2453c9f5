import { LOG_EVENT_VERSION, LogEvent, syncIdOf } from '@castlog/domain';
import { LogBatch, LogRecord } from '@castlog/event-log';
import { Database, inTransaction, storedOffsets } from '@castlog/read-model';
import { openDatabaseAt } from '@castlog/runtime';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { createTestDatabase } from '../../../test/support/databases';
import { poll } from '../../../test/support/until';
import { applyBatch, applyInTransaction, LITERAL_WRITE_ROWS, readWithLocks } from './apply-batch';
import { AppliedBatch } from './batch-plan';

const PARTITIONS = 3;

/** What a call answers per partition, less the outcomes it stored (compared with the table's on
 * their own). */
const progress = (results: readonly AppliedBatch[]) =>
  results.map(({ outcomes: _outcomes, ...rest }) => rest);
const T0 = Date.UTC(2026, 10, 23);

/** One POST of one feed for `user`, at (partition, offset): the same record however often it is
 * asked for, as a log redelivers it. */
const posts = new Map<string, LogRecord>();
const post = (user: string, partition: number, offset: number): LogRecord => {
  const key = `${user} ${partition} ${offset}`;
  const known = posts.get(key) ?? newPost(user, partition, offset);
  posts.set(key, known);
  return known;
};

/** A POST never delivered before, at (partition, offset). */
const newPost = (user: string, partition: number, offset: number): LogRecord => {
  const value: LogEvent = {
    type: 'SubscriptionsAddRequested',
    userId: user,
    items: [
      { feedUrl: `https://feeds.example.com/${user}/${partition}/${offset}`, candidateGuid: randomUUID() },
    ],
  };
  return {
    key: user,
    type: value.type,
    version: LOG_EVENT_VERSION,
    eventId: randomUUID(),
    requestId: `r-${partition}-${offset}`,
    value,
    partition,
    offset,
    timestamp: T0 + offset,
  };
};

/** `value` for `user`, at (partition, offset), appended one second after the previous offset. */
const recordOf = (value: LogEvent, partition: number, offset: number): LogRecord => ({
  key: value.userId,
  type: value.type,
  version: LOG_EVENT_VERSION,
  eventId: randomUUID(),
  requestId: `r-${partition}-${offset}`,
  value,
  partition,
  offset,
  timestamp: T0 + offset * 1000,
});

const batch = (partition: number, user: string, offsets: number[]): LogBatch => ({
  partition,
  records: offsets.map((offset) => post(user, partition, offset)),
});

/** A fresh database, migrated at `castlog`, for the tests of the describe block it is called in. */
function databaseOfItsOwn(prefix: string): () => Database {
  let database: Database | undefined;
  beforeAll(async () => {
    database = await openDatabaseAt(await createTestDatabase(prefix), 'castlog', 2);
  });
  afterAll(() => database?.close());
  return () => {
    if (!database) throw new Error(`the ${prefix} database is not open`);
    return database;
  };
}

describe('applyBatch over several partitions in one transaction', () => {
  const db = databaseOfItsOwn('apply_batch');
  const [alice, bob] = ['alice', 'bob'];

  const subscriptions = async (user: string): Promise<number> => {
    const [row] = await db().dataSource.query(
      `SELECT count(*)::int AS n FROM castlog.subscriptions WHERE user_id = $1`,
      [user],
    );
    return row.n;
  };

  it('applies each partition from its own stored offset, each record once, and answers per partition', async () => {
    const first = await applyBatch(
      db().dataSource,
      'castlog',
      [batch(2, bob, [0, 1]), batch(0, alice, [0, 1, 2])],
      PARTITIONS,
    );
    expect(progress(first)).toEqual([
      { partition: 0, applied: 3, nextOffset: 3, acceptedDeletions: [], reusedOffsets: [] },
      { partition: 2, applied: 2, nextOffset: 2, acceptedDeletions: [], reusedOffsets: [] },
    ]);

    // Redelivered and overlapping batches, one partition twice in the same call.
    const again = await applyBatch(
      db().dataSource,
      'castlog',
      [batch(0, alice, [1, 2, 3]), batch(2, bob, [0, 1]), batch(0, alice, [3, 4])],
      PARTITIONS,
    );
    expect(progress(again)).toEqual([
      { partition: 0, applied: 2, nextOffset: 5, acceptedDeletions: [], reusedOffsets: [] },
      { partition: 2, applied: 0, nextOffset: 2, acceptedDeletions: [], reusedOffsets: [] },
    ]);
    expect(await storedOffsets(db().dataSource, 'castlog')).toEqual(
      new Map([
        [0, 5],
        [2, 2],
      ]),
    );
    expect(await subscriptions(alice)).toBe(5);
    expect(await subscriptions(bob)).toBe(2);
    const outcomes = await db().dataSource.query(
      `SELECT partition, "offset" FROM castlog.request_outcomes ORDER BY partition, "offset"`,
    );
    expect(
      outcomes.map((row: { partition: number; offset: string }) => `${row.partition}:${row.offset}`),
    ).toEqual(['0:0', '0:1', '0:2', '0:3', '0:4', '2:0', '2:1']);
  });

  it('applies gpodder.net requests once however often they are delivered: devices, uploads, replacing uploads, episode actions', async () => {
    const carol = 'carol';
    const [A, B] = ['https://a.example/rss', 'https://b.example/rss'];
    const events: LogEvent[] = [
      {
        type: 'GpodderUploadRequested',
        userId: carol,
        deviceId: 'phone',
        add: [A, B].map((feedUrl) => ({ feedUrl, candidateGuid: randomUUID() })),
        remove: [],
      },
      {
        type: 'EpisodeActionsUploaded',
        userId: carol,
        actions: [
          { podcast: A, episode: 'e1', action: 'download', device: 'laptop' },
          { podcast: A, episode: 'e1', action: 'play', position: 60, timestamp: '2026-11-22T10:00:00' },
        ],
      },
      {
        type: 'GpodderUploadRequested',
        userId: carol,
        deviceId: 'tv',
        add: [{ feedUrl: 'HTTPS://A.example/rss', candidateGuid: randomUUID() }],
        remove: [],
        replace: true,
      },
      { type: 'DeviceUpdateRequested', userId: carol, deviceId: 'phone', caption: 'Phone' },
    ];
    const records = events.map((event, offset) => recordOf(event, 1, offset));
    const delivered = (offsets: number[]): LogBatch => ({
      partition: 1,
      records: offsets.map((offset) => records[offset] as LogRecord),
    });
    await applyBatch(db().dataSource, 'castlog', [delivered([0, 1])], PARTITIONS);
    const again = await applyBatch(db().dataSource, 'castlog', [delivered([0, 1, 2, 3])], PARTITIONS);
    expect(progress(again)).toEqual([
      { partition: 1, applied: 2, nextOffset: 4, acceptedDeletions: [], reusedOffsets: [] },
    ]);
    expect(
      progress(await applyBatch(db().dataSource, 'castlog', [delivered([1, 2, 3])], PARTITIONS)),
    ).toEqual([{ partition: 1, applied: 0, nextOffset: 4, acceptedDeletions: [], reusedOffsets: [] }]);

    const query = <T>(text: string) => db().dataSource.query(text, [carol]) as Promise<T[]>;
    expect(
      await query(`SELECT feed_url, is_subscribed, subscription_changed::float8 AS changed FROM castlog.subscriptions
                    WHERE user_id = $1 ORDER BY feed_url`),
    ).toEqual([
      // A, held subscribed, is named again by the replacing upload: unchanged. B is not: unsubscribed.
      { feed_url: A, is_subscribed: true, changed: T0 },
      { feed_url: B, is_subscribed: false, changed: T0 + 2000 },
    ]);
    expect(
      await query(`SELECT id, caption, type FROM castlog.devices WHERE user_id = $1 ORDER BY id`),
    ).toEqual([
      { id: 'laptop', caption: '', type: 'other' },
      { id: 'phone', caption: 'Phone', type: 'other' },
      { id: 'tv', caption: '', type: 'other' },
    ]);
    expect(
      await query(`SELECT ordinal, received_at::float8 AS received_at, action, "timestamp", device, position
                     FROM castlog.episode_actions WHERE user_id = $1 ORDER BY sequence, ordinal`),
    ).toEqual([
      {
        ordinal: 0,
        received_at: T0 + 1000,
        action: 'download',
        timestamp: '2026-11-23T00:00:01',
        device: 'laptop',
        position: null,
      },
      {
        ordinal: 1,
        received_at: T0 + 1000,
        action: 'play',
        timestamp: '2026-11-22T10:00:00',
        device: null,
        position: 60,
      },
    ]);
    const outcomes = await query<{ offset: string; outcome: unknown }>(
      `SELECT "offset", outcome FROM castlog.request_outcomes WHERE user_id = $1 ORDER BY "offset"`,
    );
    expect(outcomes.map((row) => row.outcome)).toEqual([
      { kind: 'Uploaded', updateUrls: [], clock: T0 },
      { kind: 'ActionsRecorded', clock: T0 + 1000 },
      { kind: 'Uploaded', updateUrls: [['HTTPS://A.example/rss', A]], clock: T0 + 2000 },
      { kind: 'DeviceUpdated' },
    ]);
    expect(
      (
        await query<{ last_instant: number }>(
          `SELECT last_instant::float8 AS last_instant FROM castlog.user_clocks WHERE user_id = $1`,
        )
      )[0],
    ).toEqual({ last_instant: T0 + 3000 });
  });

  it('reports applied offsets at which the log now holds other events, and applies only what is past the stored offset', async () => {
    const dave = 'dave';
    const from = (await storedOffsets(db().dataSource, 'castlog')).get(0) ?? 0;
    const [a, b, c, d] = [from, from + 1, from + 2, from + 3];
    await applyBatch(db().dataSource, 'castlog', [batch(0, dave, [a, b, c])], PARTITIONS);
    // The log lost two offsets and gave them to new events; the last offset is new.
    const reused = {
      partition: 0,
      records: [post(dave, 0, a), newPost(dave, 0, b), newPost(dave, 0, c), post(dave, 0, d)],
    };
    expect(progress(await applyBatch(db().dataSource, 'castlog', [reused], PARTITIONS))).toEqual([
      { partition: 0, applied: 1, nextOffset: d + 1, acceptedDeletions: [], reusedOffsets: [b, c] },
    ]);
    const outcomes: { offset: string; event_id: string }[] = await db().dataSource.query(
      `SELECT "offset", event_id FROM castlog.request_outcomes WHERE partition = 0 AND user_id = $1 ORDER BY "offset"`,
      [dave],
    );
    expect(outcomes).toEqual(
      [a, b, c, d].map((offset) => ({ offset: String(offset), event_id: post(dave, 0, offset).eventId })),
    );
    expect(await subscriptions(dave)).toBe(4);
  });
});

describe('applyBatch: user ids that need quoting in SQL', () => {
  const db = databaseOfItsOwn('apply_batch_quoting');

  it('locks, reads and applies them as any other (the locks and the first read are sent as literals, with BEGIN; the writes with COMMIT)', async () => {
    const users = ["o'brien", 'back\\slash', `quote'"\\'`];
    const add = (userId: string, offset: number) =>
      recordOf(
        {
          type: 'SubscriptionsAddRequested',
          userId,
          items: [
            { feedUrl: `https://feeds.example.com/it's/"${userId.length}"`, candidateGuid: randomUUID() },
          ],
        },
        1,
        offset,
      );
    const records = users.map((userId, offset) => add(userId, offset));
    expect(
      progress(await applyBatch(db().dataSource, 'castlog', [{ partition: 1, records }], PARTITIONS)),
    ).toEqual([{ partition: 1, applied: 3, nextOffset: 3, acceptedDeletions: [], reusedOffsets: [] }]);
    // The same feeds again: the read finds each user's subscription by its quoted feed_url.
    const again = users.map((userId, index) => add(userId, 3 + index));
    await applyBatch(db().dataSource, 'castlog', [{ partition: 1, records: again }], PARTITIONS);
    const rows = await db().dataSource.query(
      `SELECT c.user_id, (SELECT count(*)::int FROM castlog.subscriptions s WHERE s.user_id = c.user_id) AS n
         FROM castlog.user_clocks c ORDER BY c.user_id`,
    );
    expect(rows).toEqual([...users].sort().map((user_id) => ({ user_id, n: 1 })));
    const outcomes: { kind: string }[] = (
      await db().dataSource.query(
        `SELECT outcome FROM castlog.request_outcomes WHERE partition = 1 ORDER BY "offset"`,
      )
    ).map((row: { outcome: { results: { kind: string }[] } }) => row.outcome);
    expect(outcomes).toHaveLength(6);
    expect(JSON.stringify(outcomes.slice(0, 3))).not.toEqual(JSON.stringify(outcomes.slice(3)));
  });
});

describe('applyBatch: a write past LITERAL_WRITE_ROWS (parameters, then COMMIT alone)', () => {
  const db = databaseOfItsOwn('apply_batch_large');

  it('applies and commits it as a small one, and applies the same feeds again as known', async () => {
    const feeds = Array.from(
      { length: LITERAL_WRITE_ROWS + 1 },
      (_, i) => `https://feeds.example.com/it's/${i}`,
    );
    const add = (offset: number) =>
      recordOf(
        {
          type: 'SubscriptionsAddRequested',
          userId: "o'large",
          items: feeds.map((feedUrl) => ({ feedUrl, candidateGuid: randomUUID() })),
        },
        0,
        offset,
      );
    for (const offset of [0, 1])
      expect(
        progress(
          await applyBatch(
            db().dataSource,
            'castlog',
            [{ partition: 0, records: [add(offset)] }],
            PARTITIONS,
          ),
        ),
      ).toEqual([
        { partition: 0, applied: 1, nextOffset: offset + 1, acceptedDeletions: [], reusedOffsets: [] },
      ]);
    const [row] = await db().dataSource.query(
      `SELECT count(*)::int AS subscriptions,
              (SELECT count(*)::int FROM castlog.request_outcomes) AS outcomes
         FROM castlog.subscriptions WHERE user_id = $1`,
      ["o'large"],
    );
    expect(row).toEqual({ subscriptions: feeds.length, outcomes: 2 });
  });
});

describe('applyBatch: outcomes holding texts that mean something in SQL or JSON', () => {
  const db = databaseOfItsOwn('apply_batch_outcomes');
  const awkward = [
    `https://feeds.example.com/it's/"quoted"/{NULL}/[1,2]/😀/%00`,
    `https://feeds.example.com/${encodeURIComponent('é€')}?a=1&b='2'`,
  ];
  const refused = ['not a url \\ "x" {NULL} \\u0000', "ftp://it's/\\", "'; DROP TABLE x; --"];

  it.each([
    ['a small write, with COMMIT', 0],
    ['a write past LITERAL_WRITE_ROWS, with parameters', LITERAL_WRITE_ROWS],
  ])('stores them as decided: %s', async (_, padding) => {
    const user = `u'"\\{${padding}}`;
    const feeds = [
      ...awkward,
      ...refused,
      ...Array.from({ length: padding }, (_, i) => `https://feeds.example.com/${padding}/${i}`),
    ];
    const record = recordOf(
      {
        type: 'SubscriptionsAddRequested',
        userId: user,
        items: feeds.map((feedUrl) => ({ feedUrl, candidateGuid: randomUUID() })),
      },
      0,
      padding === 0 ? 0 : 1,
    );
    await applyBatch(db().dataSource, 'castlog', [{ partition: 0, records: [record] }], PARTITIONS);
    const [{ outcome, ...row }] = (await db().dataSource.query(
      `SELECT user_id, request_id, outcome FROM castlog.request_outcomes WHERE user_id = $1`,
      [user],
    )) as {
      user_id: string;
      request_id: string;
      outcome: { kind: string; success: { feedUrl: string }[]; failure: { feedUrl: string }[] };
    }[];
    expect(row).toEqual({ user_id: user, request_id: record.requestId });
    expect(outcome.kind).toBe('Added');
    expect(outcome.success.map((item) => item.feedUrl)).toEqual(
      feeds.filter((feed) => !refused.includes(feed)),
    );
    expect(outcome.failure.map((item) => item.feedUrl)).toEqual(refused);
  });
});

describe('applyBatch: two transactions of one partition at once (a rebalance hands it to a second projector)', () => {
  const db = databaseOfItsOwn('apply_batch_overlap');

  /** POSTs of one feed by `user` at `offsets` of `partition`, every one the same feed. */
  const sameFeed = (user: string, partition: number, offsets: number[], feed = 'the-one'): LogBatch => ({
    partition,
    records: offsets.map((offset) =>
      recordOf(
        {
          type: 'SubscriptionsAddRequested',
          userId: user,
          items: [{ feedUrl: `https://feeds.example.com/${user}/${feed}`, candidateGuid: randomUUID() }],
        },
        partition,
        offset,
      ),
    ),
  });

  /** The batch at `from`, and the same batch with the next two POSTs, as two projectors get them. */
  const overlapping = (user: string, partition: number, from: number): [LogBatch, LogBatch] => {
    const shorter = sameFeed(user, partition, [from]);
    const next = sameFeed(user, partition, [from + 1, from + 2]);
    return [shorter, { partition, records: [...shorter.records, ...next.records] }];
  };

  const countsOf = async (user: string) =>
    (
      await db().dataSource.query(
        `SELECT count(*)::int AS subscriptions,
                (SELECT count(*)::int FROM castlog.request_outcomes o WHERE o.user_id = $1) AS outcomes
           FROM castlog.subscriptions WHERE user_id = $1`,
        [user],
      )
    )[0];

  // In both cases the later POSTs of the feed must find the subscription the first created,
  // whichever transaction applied it: a decision on a state read before that commit would create a
  // second one with the same feed_url, which its unique index refuses.

  it('a user seen before: the second reads the state once the first has committed, its locks waiting', async () => {
    const [user, partition] = ['overlap-known', 1];
    await applyBatch(db().dataSource, 'castlog', [sameFeed(user, partition, [0, 1], 'another')], PARTITIONS);
    // Both start while a third transaction holds the partition's offset row, then it gives way.
    const [holder, watcher] = [db().url, db().url].map((url) => new Client({ connectionString: url }));
    await Promise.all([holder.connect(), watcher.connect()]);
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM castlog.projection_offsets WHERE partition = $1 FOR UPDATE', [
        partition,
      ]);
      const [shorter, longer] = overlapping(user, partition, 2);
      const waiting = async (): Promise<number> => {
        const { rows } = await watcher.query(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        return rows[0].waiting;
      };
      // The shorter batch queues for the row first, so it takes it first and the longer one's
      // decisions come after its commit.
      const first = applyBatch(db().dataSource, 'castlog', [shorter], PARTITIONS);
      await poll('the shorter batch waiting for the offset row', async () => (await waiting()) === 1);
      const second = applyBatch(db().dataSource, 'castlog', [longer], PARTITIONS);
      await poll('both transactions waiting for the offset row', async () => (await waiting()) === 2);
      await holder.query('ROLLBACK');
      const applied = Promise.all([first, second]);
      expect((await applied).map(progress)).toContainEqual([
        { partition, applied: 2, nextOffset: 5, acceptedDeletions: [], reusedOffsets: [] },
      ]);
    } finally {
      await Promise.all([holder.end(), watcher.end()]);
    }
    expect((await storedOffsets(db().dataSource, 'castlog')).get(partition)).toBe(5);
    expect(await countsOf(user)).toEqual({ subscriptions: 2, outcomes: 5 });
  });

  it('a new user: the state read with the locks, before the other transaction created the user, is read again', async () => {
    const [user, partition] = ['overlap-new', 0];
    const [shorter, longer] = overlapping(user, partition, 0);
    // The longer batch's transaction reads with its locks, then the shorter batch is applied and
    // committed, then the longer one goes on: there was no row of the user to wait for.
    const { opening, readOf } = readWithLocks('castlog', [longer]);
    const applied = await inTransaction(
      db().dataSource,
      async (sql, opened) => {
        await applyBatch(db().dataSource, 'castlog', [shorter], PARTITIONS);
        return applyInTransaction(sql, 'castlog', [longer], PARTITIONS, readOf(opened));
      },
      { opening },
    );
    expect(progress(applied)).toEqual([
      { partition, applied: 2, nextOffset: 3, acceptedDeletions: [], reusedOffsets: [] },
    ]);
    expect(await countsOf(user)).toEqual({ subscriptions: 1, outcomes: 3 });
  });
});

describe('applyBatch and the outcomes stored', () => {
  const db = databaseOfItsOwn('apply_batch_outcomes');

  it('answers the outcomes it stored, as the table holds them, and none for what it skips', async () => {
    const [erin, guid] = ['erin', randomUUID()];
    const records = [
      recordOf(
        {
          type: 'SubscriptionsAddRequested',
          userId: erin,
          items: [{ feedUrl: 'https://feeds.example.com/erin', candidateGuid: guid }],
        },
        2,
        0,
      ),
      recordOf({ type: 'SubscriptionUpdateRequested', userId: erin, guid, isSubscribed: false }, 2, 1),
      recordOf(
        { type: 'SubscriptionUpdateRequested', userId: erin, guid: randomUUID(), newGuid: guid },
        2,
        2,
      ),
    ];
    const [applied] = await applyBatch(db().dataSource, 'castlog', [{ partition: 2, records }], PARTITIONS);
    const stored = (await db().dataSource.query(
      `SELECT partition, "offset", event_id, outcome FROM castlog.request_outcomes
        WHERE partition = 2 ORDER BY "offset"`,
    )) as { partition: number; offset: string; event_id: string; outcome: unknown }[];
    expect(applied?.outcomes.map((o) => o.outcome.kind)).toEqual(['Added', 'Updated', 'NotFound']);
    expect(
      applied?.outcomes.map(({ partition, offset, eventId, outcome }) => ({
        partition,
        offset,
        eventId,
        outcome,
      })),
    ).toEqual(
      stored.map((row) => ({
        partition: row.partition,
        offset: Number(row.offset),
        eventId: row.event_id,
        outcome: row.outcome,
      })),
    );
    const [again] = await applyBatch(db().dataSource, 'castlog', [{ partition: 2, records }], PARTITIONS);
    expect(again?.outcomes).toEqual([]);
  });

  it('writes over no outcome: a stored offset moved back behind applied records fails the transaction, which changes nothing', async () => {
    const dave = 'dave';
    await applyBatch(db().dataSource, 'castlog', [batch(1, dave, [0, 1])], PARTITIONS);
    await db().dataSource.query(`UPDATE castlog.projection_offsets SET next_offset = 1 WHERE partition = 1`);
    // Another event at offset 1 (a log that gave the offset again): its outcome would replace the first's.
    const other: LogBatch = { partition: 1, records: [newPost(dave, 1, 1)] };
    await expect(applyBatch(db().dataSource, 'castlog', [other], PARTITIONS)).rejects.toThrow(
      /duplicate key value violates unique constraint "request_outcomes_pkey"/,
    );
    const outcomes = await db().dataSource.query(
      `SELECT event_id FROM castlog.request_outcomes WHERE partition = 1 AND "offset" = 1`,
    );
    expect(outcomes).toEqual([{ event_id: post(dave, 1, 1).eventId }]);
    const [{ n }] = await db().dataSource.query(
      `SELECT count(*)::int AS n FROM castlog.subscriptions WHERE user_id = $1`,
      [dave],
    );
    expect(n).toBe(2);
  });
});

describe('applyBatch: sync actions (the sync draft), however often they are delivered', () => {
  const db = databaseOfItsOwn('apply_batch_sync');
  const [user, client, G] = ['frank', '5f0c6a1e-8d3b-4c2a-9e7f-1b2c3d4e5f60', randomUUID()];
  const [A, B] = ['https://a.example/rss', 'https://b.example/rss'];
  const [X1, X2, X3, X4] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  /** An action that occurred `ms` milliseconds after T0. */
  const action = (kind: string, actionId: string, ms: number, data: Record<string, unknown>) => ({
    type: 'subscription',
    action: kind,
    action_id: actionId,
    occurred_at: new Date(T0 + ms).toISOString(),
    data,
  });
  const sync = (...actions: unknown[]): LogEvent => ({
    type: 'SyncActionsPosted',
    userId: user,
    clientId: client,
    actions,
  });
  const records = [
    recordOf(
      { type: 'SubscriptionsAddRequested', userId: user, items: [{ feedUrl: A, candidateGuid: G }] },
      0,
      0,
    ),
    recordOf(
      sync(
        action('subscribe', X1, 500, { feed_url: B }),
        action('unsubscribe', X2, 600, { sync_id: syncIdOf(user, G) }),
        action('unsubscribe', X3, 700, { sync_id: randomUUID() }),
      ),
      0,
      1,
    ),
    recordOf(
      sync(action('subscribe', X1, 500, { feed_url: B }), action('subscribe', X4, 1500, { feed_url: A })),
      0,
      2,
    ),
  ];
  const delivered = (offsets: number[]): LogBatch => ({
    partition: 0,
    records: offsets.map((offset) => records[offset] as LogRecord),
  });
  const query = <T>(text: string) => db().dataSource.query(text, [user]) as Promise<T[]>;

  it('writes the entities, the actions seen, the sync clock and the outcomes once', async () => {
    await applyBatch(db().dataSource, 'castlog', [delivered([0, 1])], PARTITIONS);
    await applyBatch(db().dataSource, 'castlog', [delivered([0, 1, 2])], PARTITIONS);
    expect(progress(await applyBatch(db().dataSource, 'castlog', [delivered([1, 2])], PARTITIONS))).toEqual([
      { partition: 0, applied: 0, nextOffset: 3, acceptedDeletions: [], reusedOffsets: [] },
    ]);
    const micros = (ms: number) => (T0 + ms) * 1000;
    expect(
      await query(`SELECT feed_url, is_subscribed, sync_id, subscribed_at::float8 AS subscribed_at,
                          unsubscribed_at::float8 AS unsubscribed_at, state_time::float8 AS state_time,
                          last_updated::float8 AS last_updated, last_client_id, sync_cursor::float8 AS sync_cursor
                     FROM castlog.subscriptions WHERE user_id = $1 ORDER BY sync_cursor`),
    ).toEqual([
      // B, created by X1 at its own time, the first change of the second record (at T0 + 1 s).
      {
        feed_url: B,
        is_subscribed: true,
        sync_id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4/),
        subscribed_at: micros(500),
        unsubscribed_at: null,
        state_time: micros(500),
        last_updated: micros(500),
        last_client_id: client,
        sync_cursor: micros(1000),
      },
      // A: added through /v1, unsubscribed by X2, subscribed again by X4 (the third record, at T0 + 2 s).
      {
        feed_url: A,
        is_subscribed: true,
        sync_id: syncIdOf(user, G),
        subscribed_at: micros(1500),
        unsubscribed_at: null,
        state_time: micros(1500),
        last_updated: micros(1500),
        last_client_id: client,
        sync_cursor: micros(2000),
      },
    ]);
    expect(
      await query(`SELECT action_id, status, reason, subscription_id IS NOT NULL AS acted
                     FROM castlog.sync_actions WHERE user_id = $1 ORDER BY status, action_id`),
    ).toEqual(
      [
        { action_id: X1, status: 'applied', reason: null, acted: true },
        { action_id: X2, status: 'applied', reason: null, acted: true },
        { action_id: X4, status: 'applied', reason: null, acted: true },
        { action_id: X3, status: 'rejected', reason: 'Entity not found', acted: false },
      ].sort((a, b) => a.status.localeCompare(b.status) || (a.action_id < b.action_id ? -1 : 1)),
    );
    expect(
      await query(`SELECT last_instant::float8 AS last_instant, sync_clock::float8 AS sync_clock
                     FROM castlog.user_clocks WHERE user_id = $1`),
    ).toEqual([{ last_instant: T0 + 2000, sync_clock: micros(2000) }]);
    const outcomes = await query<{ outcome: { kind: string; results?: { status: string }[] } }>(
      `SELECT outcome FROM castlog.request_outcomes WHERE user_id = $1 ORDER BY "offset"`,
    );
    expect(outcomes.map(({ outcome }) => [outcome.kind, outcome.results?.map((r) => r.status)])).toEqual([
      ['Added', undefined],
      ['Synced', ['applied', 'applied', 'rejected']],
      ['Synced', ['applied', 'applied']],
    ]);
  });
});
