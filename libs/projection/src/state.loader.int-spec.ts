import {
  Draft,
  initialState,
  keysOf,
  LogEvent,
  reach,
  syncIdOf,
  toIsoMicros,
  UserId,
  UserSubscriptions,
} from '@castlog/domain';
import { Database, poolOf, Sql, UserClocks } from '@castlog/read-model';
import { openDatabaseAt } from '@castlog/runtime';
import fc from 'fast-check';
import {
  addRequested,
  CLIENT_A,
  deletionCompleted,
  deletionRequested,
  deviceUpdated,
  episodeAction,
  episodeActionsUploaded,
  G1,
  G2,
  G3,
  newActionId,
  syncAction,
  syncPosted,
  T1,
  updateRequested,
  uploadRequested,
} from '../../domain/src/testing';
import {
  batchesArbitrary,
  foldHistory,
  HistoryEvent,
  historyArbitrary,
  keysOfState,
  relabel,
} from '../../domain/src/testing/histories';
import { createTestDatabase } from '../../../test/support/databases';
import { writeChanges } from './changes.sql';
import { loadStates } from './state.loader';

const SCHEMA = 'castlog';
const A = 'https://a.example/rss';
const B = 'https://b.example/rss';

/** Users and log positions of their own for each case, so cases never meet in the one database. */
let cases = 0;
const nextCase = () => {
  cases += 1;
  return { prefix: `loader-${cases}`, offset: cases * 10_000 };
};

describe('loadStates: the part of each state a batch reaches, read back from the read model', () => {
  let database: Database;
  let sql: Sql;
  beforeAll(async () => {
    database = await openDatabaseAt(await createTestDatabase('state_loader'), SCHEMA, 2);
    const pool = poolOf(database.dataSource);
    sql = { query: async (text, params) => (await pool.query(text, params)).rows };
  });
  afterAll(() => database?.close());

  const clocksOf = async (users: Iterable<UserId>): Promise<Map<UserId, UserClocks>> => {
    const rows = await sql.query<{ user_id: string; last_instant: number; sync_clock: number }>(
      `SELECT user_id, last_instant::float8 AS last_instant, sync_clock::float8 AS sync_clock
         FROM castlog.user_clocks WHERE user_id = ANY($1::text[])`,
      [[...users]],
    );
    return new Map(
      rows.map((row) => [row.user_id, { lastInstant: row.last_instant, syncClock: row.sync_clock }]),
    );
  };

  /** Folds `events` (logged one minute apart, for users renamed to this case's; or, given as a
   * function of the renaming, for the users they name) and writes every change in one batch;
   * answers the folded states. */
  const stored = async (
    events: readonly LogEvent[] | ((user: (userId: UserId) => UserId) => readonly LogEvent[]),
  ) => {
    const { prefix, offset } = nextCase();
    const renamed = (userId: UserId) => `${prefix}-${userId}`;
    const history = relabel(
      (typeof events === 'function' ? events(renamed) : events).map((event, i) => ({
        logged: { event, sequence: i + 1 },
        recordTime: T1 + i * 60_000,
      })),
      typeof events === 'function' ? (userId) => userId : renamed,
      offset,
    );
    const { steps, states } = foldHistory(history);
    await writeChanges(
      sql,
      SCHEMA,
      steps.flatMap((step) => step.decision.changes),
    );
    const user = (userId: UserId) => `${prefix}-${userId}`;
    return { states, user, offset };
  };

  it('answers an empty state at the given clock for a user with nothing stored', async () => {
    const keys = keysOf([deletionRequested(G1, 'loader-nobody')]);
    const states = await loadStates(
      sql,
      SCHEMA,
      keys,
      new Map([['loader-nobody', { lastInstant: 42, syncClock: 7 }]]),
    );
    expect(states.get('loader-nobody')?.syncClock).toBe(7);
    expect(states).toEqual(
      new Map([['loader-nobody', { ...initialState('loader-nobody', 42), syncClock: 7 }]]),
    );
  });

  it('reaches a subscription by any guid of its chain, by a normalised feed_url, or by a deletion', async () => {
    const { states, user, offset } = await stored([
      addRequested([{ feed_url: A, guid: G1 }]),
      updateRequested(G1, { new_guid: G2 }),
      addRequested([{ feed_url: B, guid: G3 }]),
      deletionRequested(G3),
    ]);
    const folded = states.get(user('user-alice')) as UserSubscriptions;
    const loadedFor = async (event: LogEvent) => {
      const keys = keysOf([{ ...event, userId: user('user-alice') } as LogEvent]);
      const loaded = await loadStates(sql, SCHEMA, keys, await clocksOf(keys.users));
      const state = loaded.get(user('user-alice'));
      expect(state).toEqual(reach(folded, keys));
      return [...(state?.subscriptions.keys() ?? [])];
    };
    expect(await loadedFor(updateRequested(G2, { is_subscribed: false }))).toEqual([G1]);
    expect(await loadedFor(addRequested([{ feed_url: 'HTTPS://A.example:443/rss#top' }]))).toEqual([G1]);
    expect(await loadedFor(deletionCompleted(offset + 4, T1))).toEqual([G3]);
    expect(await loadedFor(deletionRequested('99999999-9999-4999-8999-999999999999'))).toEqual([]);
  });

  it('follows merges, and loads the deletion attached to what it reaches', async () => {
    const { states, user, offset } = await stored([
      addRequested([{ feed_url: A, guid: G1 }]),
      addRequested([{ feed_url: B, guid: G2 }]),
      updateRequested(G2, { new_guid: G3 }),
      updateRequested(G1, { new_guid: G2 }),
      deletionRequested(G1),
    ]);
    const alice = user('user-alice');
    const keys = keysOf([{ ...updateRequested(G1, { is_subscribed: false }), userId: alice }]);
    const loaded = (await loadStates(sql, SCHEMA, keys, await clocksOf(keys.users))).get(alice);
    expect(loaded).toEqual(reach(states.get(alice) as UserSubscriptions, keys));
    expect([...(loaded?.subscriptions.keys() ?? [])].sort()).toEqual([G1, G2]);
    expect([...(loaded?.deletions.keys() ?? [])]).toEqual([offset + 5]);
  });

  it("keeps users apart: another user's subscriptions with the same guids and feed_urls are not loaded", async () => {
    const { states, user } = await stored([
      addRequested([{ feed_url: A, guid: G1 }]),
      addRequested('user-bob', [{ feed_url: A, guid: G1 }]),
      addRequested('user-bob', [{ feed_url: B, guid: G2 }]),
    ]);
    const [alice, bob] = [user('user-alice'), user('user-bob')];
    const keys = keysOf([
      { ...addRequested([{ feed_url: B, guid: G1 }]), userId: alice },
      { ...deletionRequested(G1), userId: bob },
    ]);
    const loaded = await loadStates(sql, SCHEMA, keys, await clocksOf(keys.users));
    expect(loaded.get(alice)).toEqual(reach(states.get(alice) as UserSubscriptions, keys));
    expect(loaded.get(bob)).toEqual(reach(states.get(bob) as UserSubscriptions, keys));
    expect(loaded.get(alice)?.subscriptions.size).toBe(1);
    expect(loaded.get(bob)?.byFeedUrl.size).toBe(1);
  });

  it('loads the devices named, each of its own user, and no other', async () => {
    const { states, user } = await stored([
      deviceUpdated('phone', { caption: 'Phone', type: 'mobile' }),
      uploadRequested('tv', { add: [A] }),
      episodeActionsUploaded([episodeAction(A, 'e1', { device: 'laptop' })]),
      deviceUpdated('phone', { caption: 'Bob' }, 'user-bob'),
    ]);
    const [alice, bob] = [user('user-alice'), user('user-bob')];
    const keys = keysOf([
      { ...deviceUpdated('phone'), userId: alice },
      {
        ...episodeActionsUploaded([
          episodeAction(A, 'e1', { device: 'laptop' }),
          episodeAction(A, 'e2', { device: 'car' }),
        ]),
        userId: alice,
      },
      { ...uploadRequested('tv', {}), userId: bob },
    ]);
    const loaded = await loadStates(sql, SCHEMA, keys, await clocksOf(keys.users));
    expect(loaded.get(alice)).toEqual(reach(states.get(alice) as UserSubscriptions, keys));
    expect(loaded.get(alice)?.devices).toEqual(
      new Map([
        ['phone', { userId: alice, id: 'phone', caption: 'Phone', type: 'mobile', lastUsed: T1 }],
        ['laptop', { userId: alice, id: 'laptop', caption: '', type: 'other', lastUsed: T1 + 120_000 }],
      ]),
    );
    expect(loaded.get(bob)?.devices.size).toBe(0);
  });

  it('loads a device stored before last uses were (NULL) with its last use unknown', async () => {
    const { user } = await stored([deviceUpdated('phone', { caption: 'Phone' })]);
    const alice = user('user-alice');
    await sql.query(`UPDATE castlog.devices SET last_used = NULL WHERE user_id = $1`, [alice]);
    const keys = keysOf([{ ...deviceUpdated('phone'), userId: alice }]);
    const loaded = await loadStates(sql, SCHEMA, keys, await clocksOf(keys.users));
    expect(loaded.get(alice)?.devices.get('phone')).toEqual({
      userId: alice,
      id: 'phone',
      caption: 'Phone',
      type: 'other',
      lastUsed: null,
    });
  });

  it('loads every subscription of a whole user (a replacing upload): unsubscribed, merged and deleted ones too', async () => {
    const { states, user, offset } = await stored([
      addRequested([{ feed_url: A, guid: G1 }]),
      addRequested([{ feed_url: B, guid: G2 }]),
      addRequested([{ feed_url: 'https://c.example/rss', guid: G3 }]),
      updateRequested(G3, { new_guid: G2 }),
      updateRequested(G2, { is_subscribed: false }),
      deletionRequested(G1),
      deletionCompleted(6, T1 + 5 * 60_000),
      addRequested('user-bob', [{ feed_url: A, guid: G1 }]),
    ]);
    const [alice, bob] = [user('user-alice'), user('user-bob')];
    const keys = keysOf([
      { ...uploadRequested('phone', { replace: true }), userId: alice },
      { ...uploadRequested('phone', {}), userId: bob },
    ]);
    expect(keys.wholeUsers).toEqual(new Set([alice]));
    const loaded = await loadStates(sql, SCHEMA, keys, await clocksOf(keys.users));
    const whole = states.get(alice) as UserSubscriptions;
    expect(loaded.get(alice)).toEqual(reach(whole, keys));
    expect(loaded.get(alice)?.subscriptions).toEqual(whole.subscriptions);
    expect(loaded.get(alice)?.byGuid).toEqual(whole.byGuid);
    expect(loaded.get(alice)?.byFeedUrl).toEqual(whole.byFeedUrl);
    expect([...(loaded.get(alice)?.deletions.keys() ?? [])]).toEqual([offset + 6]);
    expect(loaded.get(bob)?.subscriptions.size).toBe(0);
  });

  it('reaches a subscription by its sync_id, and by an action seen before, with what that action acted on', async () => {
    const [X1, X2, X3, X4] = [newActionId(), newActionId(), newActionId(), newActionId()];
    const at = toIsoMicros(T1 * 1000 + 1);
    const action = (kind: string, actionId: string, data: Record<string, unknown>) =>
      syncAction(kind, at, data, actionId);
    const sync = (userId: UserId, ...actions: unknown[]): LogEvent => syncPosted(actions, CLIENT_A, userId);
    const { states, user } = await stored((user) => [
      { ...addRequested([{ feed_url: A, guid: G1 }]), userId: user('user-alice') },
      sync(user('user-alice'), action('subscribe', X1, { feed_url: B })),
      sync(user('user-alice'), action('unsubscribe', X2, { sync_id: syncIdOf(user('user-alice'), G1) })),
      sync(user('user-alice'), action('unsubscribe', X3, { sync_id: syncIdOf('nobody', G1) })),
    ]);
    const alice = user('user-alice');
    const folded = states.get(alice) as UserSubscriptions;
    expect(folded.seenActions.size).toBe(3);
    expect(folded.syncClock).toBeGreaterThan(0);
    const loadedFor = async (...actions: unknown[]) => {
      const keys = keysOf([sync(alice, ...actions)]);
      const state = (await loadStates(sql, SCHEMA, keys, await clocksOf(keys.users))).get(alice);
      expect(state).toEqual(reach(folded, keys));
      return {
        subscriptions: [...(state?.subscriptions.keys() ?? [])],
        seen: [...(state?.seenActions.keys() ?? [])],
      };
    };
    expect(
      await loadedFor(
        action('update', X4, { sync_id: syncIdOf(alice, G1), feed_url: 'https://c.example/rss' }),
      ),
    ).toEqual({
      subscriptions: [G1],
      seen: [],
    });
    expect(await loadedFor(action('unsubscribe', X2, {}))).toEqual({ subscriptions: [G1], seen: [X2] });
    expect(await loadedFor(action('unsubscribe', X3, {}))).toEqual({ subscriptions: [], seen: [X3] });
    const byFeed = folded.byFeedUrl.get(B);
    expect(await loadedFor(action('subscribe', X1, { feed_url: B }))).toEqual({
      subscriptions: [byFeed],
      seen: [X1],
    });
    // Another user's sync_ids and actions are not loaded.
    const bob = user('user-bob');
    const keys = keysOf([sync(bob, action('unsubscribe', X2, { sync_id: syncIdOf(alice, G1) }))]);
    expect((await loadStates(sql, SCHEMA, keys, await clocksOf(keys.users))).get(bob)).toEqual(
      initialState(bob),
    );
  });

  it('whatever changeWrites writes, loadStates reads back as the decider folded it, batch after batch', () =>
    fc.assert(
      fc.asyncProperty(
        historyArbitrary({ maxLength: 25 }).chain((history) =>
          fc.tuple(fc.constant(history), batchesArbitrary(history.length)),
        ),
        async ([generated, cuts]) => {
          const { prefix, offset } = nextCase();
          const history: HistoryEvent[] = relabel(generated, (userId) => `${prefix}-${userId}`, offset);
          const { steps, states } = foldHistory(history);
          // As the projector does: per batch, load what its events reach, then write its changes.
          const folded = new Map<UserId, UserSubscriptions>();
          for (let b = 0; b + 1 < cuts.length; b++) {
            const batch = steps.slice(cuts[b], cuts[b + 1]);
            const keys = keysOf(batch.map((step) => step.logged.event));
            const loaded = await loadStates(sql, SCHEMA, keys, await clocksOf(keys.users));
            for (const userId of keys.users) {
              expect(loaded.get(userId)).toEqual(reach(folded.get(userId) ?? initialState(userId), keys));
            }
            await writeChanges(
              sql,
              SCHEMA,
              batch.flatMap((step) => step.decision.changes),
            );
            for (const step of batch) {
              const userId = step.logged.event.userId;
              folded.set(
                userId,
                new Draft(folded.get(userId) ?? initialState(userId)).apply(step.decision.changes).state,
              );
            }
          }
          for (const state of states.values()) {
            const clocks = await clocksOf([state.userId]);
            // The whole of every state, reached by all its keys (its devices among them);
            const every = keysOfState(state);
            expect((await loadStates(sql, SCHEMA, every, clocks)).get(state.userId)).toEqual(state);
            // what the user as a whole reaches (a replacing upload);
            const whole = {
              ...every,
              guids: [],
              feedUrls: [],
              deletionIds: [],
              deviceIds: [],
              syncIds: [],
              actionIds: [],
              wholeUsers: new Set([state.userId]),
            };
            expect((await loadStates(sql, SCHEMA, whole, clocks)).get(state.userId)).toEqual(
              reach(state, whole),
            );
            // and what each guid, sync_id or action seen alone reaches (through merges, to the
            // deletions attached).
            const none = { ...every, guids: [], feedUrls: [], deletionIds: [], syncIds: [], actionIds: [] };
            const alone = [
              ...every.guids.map((key) => ({ ...none, guids: [key] })),
              ...every.syncIds.map((key) => ({ ...none, syncIds: [key] })),
              ...every.actionIds.map((key) => ({ ...none, actionIds: [key] })),
            ];
            for (const keys of alone) {
              expect((await loadStates(sql, SCHEMA, keys, clocks)).get(state.userId)).toEqual(
                reach(state, keys),
              );
            }
          }
        },
      ),
      { numRuns: 40 },
    ));
});
