import { replayInto, verifyReplay } from '@castlog/replay';
import { feed, guid } from '../../../../test/support/contract';
import { uniqueName } from '../../../../test/support/databases';
import {
  CastlogUnderTest,
  EventLogKind,
  startCastlog,
  TestUser,
} from '../../../../test/support/start-castlog';
import { syncAction } from '../../../../libs/domain/src/testing';
import { soon, syncIdOfUser, syncThroughLog } from '../../../../test/support/sync-through-log';
import { replay, ReplayDeps } from './replay.command';

/** stdout and stderr collected as text; stderr a terminal when asked. */
function io(tty = false) {
  const stdout = { text: '', write: (chunk: string) => (stdout.text += chunk) };
  const stderr = { text: '', isTTY: tty, columns: 120, write: (chunk: string) => (stderr.text += chunk) };
  return { stdout, stderr };
}

describe.each<EventLogKind>(['kafka', 'postgres'])('castlog replay on the %s log', (log) => {
  let app: CastlogUnderTest;
  let alice: TestUser;
  let bob: TestUser;

  const deps = (tty = false): ReplayDeps & ReturnType<typeof io> => ({
    ...io(tty),
    dataSource: app.runtime.database.dataSource,
    eventLog: app.runtime.eventLog,
    liveSchema: app.runtime.database.schema,
  });

  /** Every kind of event: adds (one item invalid), updates, a merge, a 404, a deletion finalized by the
   * saga, a POST that reinstates the deleted subscription, and sync actions (a subscribe, an
   * unsubscribe and an update by sync_id, one rejected, and one retried). */
  async function writeHistory(user: TestUser) {
    const as = app.as(user);
    const [a, b] = [guid(), guid()];
    const added = await as.post('/v1/subscriptions', {
      subscriptions: [
        { feed_url: feed(), guid: a },
        { feed_url: feed(), guid: b },
        { feed_url: feed() },
        { feed_url: 'ftp://x' },
      ],
    });
    expect(added.status).toBe(200);
    expect((await as.patch(`/v1/subscriptions/${a}`, { is_subscribed: false })).status).toBe(200);
    expect(
      (await as.patch(`/v1/subscriptions/${a}`, { new_guid: guid(), new_feed_url: feed('moved') })).status,
    ).toBe(200);
    expect((await as.patch(`/v1/subscriptions/${b}`, { new_guid: a })).status).toBe(200);
    expect((await as.patch(`/v1/subscriptions/${guid()}`, { is_subscribed: true })).status).toBe(404);
    const deletion = await as.delete(`/v1/subscriptions/${a}`);
    expect(deletion.status).toBe(202);
    await app.until('the deletion finishes', async () => {
      const status = await as.get(`/v1/deletions/${deletion.body.deletion_id}`);
      return status.body.status === 'SUCCESS';
    });
    expect(
      (await as.post('/v1/subscriptions', { subscriptions: [{ feed_url: feed(), guid: a }] })).status,
    ).toBe(200);
    const third = added.body.success[2].guid as string;
    const subscribe = syncAction('subscribe', soon(), { feed_url: feed('synced') });
    await syncThroughLog(app, user, [
      subscribe,
      syncAction('unsubscribe', soon(), { sync_id: syncIdOfUser(user, third) }),
      syncAction('update', soon(), { sync_id: syncIdOfUser(user, a), feed_url: feed('updated') }),
      syncAction('unsubscribe', soon(), { sync_id: guid() }),
    ]);
    await syncThroughLog(app, user, [
      subscribe,
      syncAction('subscribe', soon(), { feed_url: feed('synced') }),
    ]);
  }

  beforeAll(async () => {
    app = await startCastlog({ log });
    [alice, bob] = [await app.freshUser(), await app.freshUser()];
    await Promise.all([writeHistory(alice), writeHistory(bob)]);
  }, 120_000);
  afterAll(() => app?.close());

  /** Every index of a schema's tables, as PostgreSQL would create it again, the schema named `s`. */
  const indexesOf = async (schema: string): Promise<string[]> =>
    (
      (await app.runtime.database.dataSource.query(
        `SELECT replace(indexdef, quote_ident(schemaname) || '.', 's.') AS definition FROM pg_indexes
          WHERE schemaname = $1 ORDER BY indexname`,
        [schema],
      )) as { definition: string }[]
    ).map(({ definition }) => definition);

  it('rebuilds the read model from the log and finds it equal to the live one', async () => {
    const d = deps();
    const scratch = uniqueName('scratch');
    expect(await replay(d, { verify: true, schema: scratch })).toBe(0);
    // The indexes only readers use are built after the replay's writes: in the end, all are there.
    expect(await indexesOf(scratch)).toEqual(await indexesOf(app.runtime.database.schema));
    expect(d.stdout.text).toMatch(/^replay equals the live read model: \d+ events, \d+ subscriptions\n$/);
    const [, events, subscriptions] = /(\d+) events, (\d+) subscriptions/.exec(d.stdout.text)!.map(Number);
    const [live] = await app.runtime.database.dataSource.query(
      `SELECT (SELECT count(*) FROM "${app.runtime.database.schema}".request_outcomes)::int AS events,
              (SELECT count(*) FROM "${app.runtime.database.schema}".subscriptions)::int AS subscriptions`,
    );
    expect({ events, subscriptions }).toEqual(live);
    expect(subscriptions).toBeGreaterThanOrEqual(6);
    // The sync actions seen are compared too: five of each user's history.
    const [{ seen }] = await app.runtime.database.dataSource.query(
      `SELECT count(*)::int AS seen FROM "${scratch}".sync_actions`,
    );
    expect(seen).toBeGreaterThanOrEqual(10);
    // Not a terminal: progress as plain lines on stderr, with the rate and the ETA.
    expect(d.stderr.text).toMatch(/^replay: 0\/\d+ events \(0%\), \d+ events\/s, ETA \?\n/);
    expect(d.stderr.text).toMatch(/replay: \d+ events in \d+\.\d s \(\d+ events\/s\)\n/);
    expect(d.stderr.text).not.toContain('\u001b');
  });

  it('without --verify, replays into the default scratch schema, dropping what it held', async () => {
    const scratch = `${app.runtime.database.schema}_replay`;
    const first = deps();
    expect(await replay(first)).toBe(0);
    expect(first.stdout.text).toMatch(
      new RegExp(`^replayed (\\d+) events into schema ${scratch}: (\\d+) subscriptions\\n$`),
    );
    await app.runtime.database.dataSource.query(
      `UPDATE "${scratch}".subscriptions SET feed_url = 'https://stale.example/'`,
    );
    const second = deps();
    expect(await replay(second)).toBe(0);
    expect(second.stdout.text).toBe(first.stdout.text);
    const stale = await app.runtime.database.dataSource.query(
      `SELECT 1 FROM "${scratch}".subscriptions WHERE feed_url = 'https://stale.example/'`,
    );
    expect(stale).toEqual([]);
  });

  it('prints each difference and exits 1 when the live read model was changed behind the log', async () => {
    const { dataSource, schema } = app.runtime.database;
    const [sub] = await dataSource.query(
      `SELECT id FROM "${schema}".subscriptions WHERE user_id = $1 AND deleted IS NULL AND merged_into IS NULL LIMIT 1`,
      [alice.id],
    );
    const [clockRow] = await dataSource.query(`SELECT * FROM "${schema}".user_clocks WHERE user_id = $1`, [
      bob.id,
    ]);
    await dataSource.query(
      `UPDATE "${schema}".subscriptions SET is_subscribed = NOT is_subscribed WHERE user_id = $1 AND id = $2`,
      [alice.id, sub.id],
    );
    await dataSource.query(`DELETE FROM "${schema}".user_clocks WHERE user_id = $1`, [bob.id]);
    try {
      const d = deps();
      expect(await replay(d, { verify: true, schema: uniqueName('scratch') })).toBe(1);
      const lines = d.stdout.text.trimEnd().split('\n');
      expect(lines[0]).toMatch(
        /^2 differences between the live read model \(schema \w+\) and the replay \(schema \w+\) of \d+ events:$/,
      );
      expect(lines).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^subscriptions \\{"id": ?"${sub.id}", ?"user_id": ?"${alice.id}"\\}: is_subscribed live (true|false), replayed (true|false)$`,
          ),
        ),
      );
      expect(lines).toContainEqual(
        expect.stringMatching(
          new RegExp(`^user_clocks \\{.*"${bob.id}".*\\}: only in the replay: \\{.*\\}$`),
        ),
      );
    } finally {
      await dataSource.query(
        `UPDATE "${schema}".subscriptions SET is_subscribed = NOT is_subscribed WHERE user_id = $1 AND id = $2`,
        [alice.id, sub.id],
      );
      await dataSource.query(
        `INSERT INTO "${schema}".user_clocks (user_id, last_instant, sync_clock) VALUES ($1, $2, $3)`,
        [clockRow.user_id, clockRow.last_instant, clockRow.sync_clock],
      );
    }
    expect(await replay(deps(), { verify: true, schema: uniqueName('scratch') })).toBe(0);
  });

  it('finds two rows that traded a value, though every column holds the same values as before', async () => {
    const { dataSource, schema } = app.runtime.database;
    const s = `"${schema}"`;
    const rows: { user_id: string; id: string; feed_url: string }[] = await dataSource.query(
      `SELECT user_id, id, feed_url FROM ${s}.subscriptions ORDER BY user_id, id LIMIT 2`,
    );
    const [one, other] = rows;
    if (!one || !other) throw new Error('the history wrote fewer than two subscriptions');
    expect(one.feed_url).not.toBe(other.feed_url);
    const give = (to: typeof one, feedUrl: string) =>
      dataSource.query(`UPDATE ${s}.subscriptions SET feed_url = $3 WHERE user_id = $1 AND id = $2`, [
        to.user_id,
        to.id,
        feedUrl,
      ]);
    await give(one, other.feed_url);
    await give(other, one.feed_url);
    try {
      const d = deps();
      expect(await replay(d, { verify: true, schema: uniqueName('scratch') })).toBe(1);
      const lines = d.stdout.text.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^2 differences between the live read model/);
      for (const [row, tradedWith] of [
        [one, other],
        [other, one],
      ]) {
        expect(lines).toContainEqual(
          `subscriptions ${JSON.stringify({ id: row.id, user_id: row.user_id })}: ` +
            `feed_url live ${JSON.stringify(tradedWith.feed_url)}, replayed ${JSON.stringify(row.feed_url)}`,
        );
      }
    } finally {
      await give(one, one.feed_url);
      await give(other, other.feed_url);
    }
    expect(await replay(deps(), { verify: true, schema: uniqueName('scratch') })).toBe(0);
  });

  it('compares feed URLs by what they map to, wherever the live read model stores them', async () => {
    const { dataSource, schema } = app.runtime.database;
    const s = `"${schema}"`;
    const verify = async () => {
      const d = deps();
      return {
        exitCode: await replay(d, { verify: true, schema: uniqueName('scratch') }),
        stdout: d.stdout.text,
      };
    };
    const [created] = await dataSource.query(
      `SELECT id, created_feed_url FROM ${s}.subscriptions sub WHERE user_id = $1 AND created_feed_url IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM ${s}.subscription_later_feed_urls f
                           WHERE f.user_id = $1 AND f.normalized_feed_url = sub.created_feed_url)
        LIMIT 1`,
      [alice.id],
    );
    // A feed URL kept in the table behind the view, as a read model written before created_feed_url
    // existed keeps it: the same mapping, so no difference.
    await dataSource.query(
      `UPDATE ${s}.subscriptions SET created_feed_url = NULL WHERE user_id = $1 AND id = $2`,
      [alice.id, created.id],
    );
    await dataSource.query(
      `INSERT INTO ${s}.subscription_later_feed_urls (user_id, normalized_feed_url, subscription_id) VALUES ($1, $2, $3)`,
      [alice.id, created.created_feed_url, created.id],
    );
    try {
      expect(await verify()).toEqual({ exitCode: 0, stdout: expect.stringMatching(/^replay equals/) });
    } finally {
      await dataSource.query(
        `DELETE FROM ${s}.subscription_later_feed_urls WHERE user_id = $1 AND normalized_feed_url = $2`,
        [alice.id, created.created_feed_url],
      );
      await dataSource.query(
        `UPDATE ${s}.subscriptions SET created_feed_url = $3 WHERE user_id = $1 AND id = $2`,
        [alice.id, created.id, created.created_feed_url],
      );
    }

    // A later claim lost while every subscription row is intact: the mapping differs.
    const [claim] = await dataSource.query(
      `SELECT * FROM ${s}.subscription_later_feed_urls WHERE user_id = $1 LIMIT 1`,
      [bob.id],
    );
    await dataSource.query(
      `DELETE FROM ${s}.subscription_later_feed_urls WHERE user_id = $1 AND normalized_feed_url = $2`,
      [bob.id, claim.normalized_feed_url],
    );
    try {
      const { exitCode, stdout } = await verify();
      expect(exitCode).toBe(1);
      expect(stdout).toMatch(new RegExp(`^subscription_feed_urls \\{.*"${bob.id}".*\\}: `, 'm'));
    } finally {
      await dataSource.query(
        `INSERT INTO ${s}.subscription_later_feed_urls (user_id, normalized_feed_url, subscription_id) VALUES ($1, $2, $3)`,
        [claim.user_id, claim.normalized_feed_url, claim.subscription_id],
      );
    }
    expect((await verify()).exitCode).toBe(0);
  }, 60_000);

  it('catches a scratch schema that the log has moved past up before comparing', async () => {
    const scratch = uniqueName('scratch');
    const options = {
      dataSource: app.runtime.database.dataSource,
      eventLog: app.runtime.eventLog,
      schema: scratch,
    };
    const before = await replayInto(options);
    await writeHistory(await app.freshUser());
    expect(await verifyReplay({ ...options, liveSchema: app.runtime.database.schema })).toEqual([]);
    const [after] = await app.runtime.database.dataSource.query(
      `SELECT sum(next_offset)::int AS events FROM "${scratch}".projection_offsets`,
    );
    expect(after.events).toBeGreaterThan([...before.values()].reduce((sum, next) => sum + next, 0));
  }, 60_000);

  it('shows a progress bar with the rate and the ETA on a terminal', async () => {
    const d = deps(true);
    expect(await replay(d, { schema: uniqueName('scratch') })).toBe(0);
    expect(d.stderr.text).toMatch(/replay \[.*\] \d+% \| \d+\/\d+ events \| \d+ events\/s \| ETA /);
  });

  it("refuses the live schema, a projection version's, a name that is not a plain identifier, or one PostgreSQL would cut, as the scratch schema", async () => {
    const live = deps();
    expect(await replay(live, { schema: app.runtime.database.schema })).toBe(2);
    expect(live.stderr.text).toBe(
      `castlog: --schema ${app.runtime.database.schema} is the live read model: a replay drops its scratch schema\n`,
    );
    const version = deps();
    const reserved = `${app.runtime.database.schema}_v7`;
    expect(await replay(version, { schema: reserved })).toBe(2);
    expect(version.stderr.text).toBe(
      `castlog: --schema ${reserved} is where projection version 7 of the read model is built\n`,
    );
    const bad = deps();
    expect(await replay(bad, { schema: 'x"; DROP SCHEMA castlog_auth' })).toBe(2);
    expect(bad.stderr.text).toMatch(/^castlog: --schema must be a lower-case SQL identifier/);
    const long = deps();
    expect(await replay(long, { schema: `scratch_${'x'.repeat(56)}` })).toBe(2);
    expect(long.stderr.text).toBe(
      'castlog: --schema must be at most 63 characters (PostgreSQL cuts longer names), not 64\n',
    );
    expect(live.stdout.text + bad.stdout.text + long.stdout.text).toBe('');
    // Below the CLI too: a schema the migrations made is never dropped.
    for (const schema of [app.runtime.database.schema, 'castlog_auth', 'castlog_projections']) {
      await expect(
        replayInto({ dataSource: app.runtime.database.dataSource, eventLog: app.runtime.eventLog, schema }),
      ).rejects.toThrow(`refusing to replay into schema ${schema}: it is not a scratch schema`);
    }
    const [versions] = await app.runtime.database.dataSource.query(
      `SELECT count(*)::int AS n FROM castlog_projections.versions`,
    );
    expect(versions.n).toBeGreaterThan(0);
  });

  it('drops only a schema that a replay made: another schema of that name is left alone', async () => {
    const { dataSource } = app.runtime.database;
    const theirs = uniqueName('theirs');
    await dataSource.query(`CREATE SCHEMA "${theirs}"`);
    await dataSource.query(`CREATE TABLE "${theirs}".notes (id int PRIMARY KEY)`);
    await dataSource.query(`INSERT INTO "${theirs}".notes VALUES (1)`);
    const d = deps();
    expect(await replay(d, { schema: theirs })).toBe(2);
    expect(d.stderr.text).toBe(
      `castlog: refusing to replay into schema ${theirs}: it exists and no replay made it (drop it yourself if it is not wanted)\n`,
    );
    expect(await dataSource.query(`SELECT id FROM "${theirs}".notes`)).toEqual([{ id: 1 }]);
    // A schema a replay made is replayed into again.
    const scratch = uniqueName('scratch');
    expect(await replay(deps(), { schema: scratch })).toBe(0);
    expect(await replay(deps(), { schema: scratch })).toBe(0);
  }, 60_000);

  it('refuses a second replay into a schema while one is running', async () => {
    const scratch = uniqueName('scratch');
    const options = {
      dataSource: app.runtime.database.dataSource,
      eventLog: app.runtime.eventLog,
      schema: scratch,
    };
    const results = await Promise.allSettled([replayInto(options), replayInto(options)]);
    expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = results.find((result) => result.status === 'rejected') as PromiseRejectedResult;
    expect(String(refused.reason)).toContain(`another replay into schema ${scratch} is running`);
    expect(await replayInto(options)).toBeInstanceOf(Map);
  }, 60_000);
});
