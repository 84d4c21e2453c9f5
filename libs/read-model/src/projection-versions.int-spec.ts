import { Client } from 'pg';
import { poll } from '../../../test/support/until';
import { Database } from './database';
import { PROJECTIONS_CHANNEL } from './notifications';
import { ActiveProjection, projectionSchema, ProjectionVersions } from './projection-versions';
import { openReadModelTestDatabase, storeOffsets } from './testing/read-model-database';

const BASE = 'rm';
const V2 = projectionSchema(BASE, 2);

describe('ProjectionVersions', () => {
  let database: Database;
  let versions: ProjectionVersions;
  beforeEach(async () => {
    database = await openReadModelTestDatabase('projection_versions', [BASE, V2]);
    versions = new ProjectionVersions(database.dataSource, BASE);
  });
  afterEach(() => database?.close());

  const statuses = async () => (await versions.list()).map(({ version, status }) => `${version} ${status}`);

  describe('register', () => {
    it('makes the first version active, a later one building, and answers the active one', async () => {
      expect(await versions.register(1)).toMatchObject({ version: 1, schema: BASE, status: 'active' });
      expect(await versions.register(2)).toMatchObject({ version: 1, status: 'active' });
      expect(await versions.register(2)).toMatchObject({ version: 1, status: 'active' });
      expect(await statuses()).toEqual(['1 active', '2 building']);
      expect((await versions.list())[1]).toMatchObject({ schema: V2, activatedAt: null });
    });
  });

  describe('activateIfCaughtUp', () => {
    beforeEach(async () => {
      await versions.register(1);
      await versions.register(2);
      await storeOffsets(database.dataSource, BASE, { 0: 50, 1: 30 });
    });

    it('answers already-active for the active version', async () => {
      expect(await versions.activateIfCaughtUp(1)).toBe('already-active');
      expect(await statuses()).toEqual(['1 active', '2 building']);
    });

    it('answers behind, without waiting, while more than closeEnough events behind', async () => {
      await storeOffsets(database.dataSource, V2, { 0: 10, 1: 30 });
      // Another transaction holds the active version's offsets, as a projector's batch does: a
      // check that went on to lock them and hold would wait for it, so answering proves it did not.
      const holder = new Client({ connectionString: database.url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query(`SELECT 1 FROM ${BASE}.projection_offsets FOR UPDATE`);
        expect(await versions.activateIfCaughtUp(2, { closeEnough: 39, holdMs: 5_000 })).toBe('behind');
      } finally {
        await holder.end();
      }
      expect(await statuses()).toEqual(['1 active', '2 building']);
    });

    it('switches once caught up, retiring the old version, and announces the switch at commit', async () => {
      await storeOffsets(database.dataSource, V2, { 0: 50, 1: 30 });
      const listener = new Client({ connectionString: database.url });
      const notices: unknown[] = [];
      listener.on('notification', (message) => notices.push(JSON.parse(message.payload ?? 'null')));
      await listener.connect();
      try {
        await listener.query(`LISTEN ${PROJECTIONS_CHANNEL}`);
        expect(await versions.activateIfCaughtUp(2)).toBe('activated');
        expect(await statuses()).toEqual(['1 retired', '2 active']);
        expect((await versions.active())?.activatedAt).toBeInstanceOf(Date);
        await poll('the switch notice', () => notices.length > 0, { timeoutMs: 5_000, everyMs: 20 });
        expect(notices).toEqual([{ base: BASE, version: 2, schema: V2 }]);
        expect(await versions.activateIfCaughtUp(2)).toBe('already-active');
      } finally {
        await listener.end();
      }
    });

    it('answers behind after holdMs when the new version does not reach the locked offsets', async () => {
      await storeOffsets(database.dataSource, V2, { 0: 49, 1: 30 });
      expect(await versions.activateIfCaughtUp(2, { closeEnough: 10, holdMs: 100 })).toBe('behind');
      expect(await statuses()).toEqual(['1 active', '2 building']);
    });

    it("holds the active version's writers while the new version catches up, then switches", async () => {
      await storeOffsets(database.dataSource, V2, { 0: 48, 1: 30 });
      const activation = versions.activateIfCaughtUp(2, { closeEnough: 10, holdMs: 20_000 });
      // The switch locks version 1's offset rows (FOR UPDATE), as its projector's batches do first.
      await poll('the switch to lock the active offsets', async () => {
        const [held] = await database.dataSource.query(
          `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
            WHERE c.relname = 'projection_offsets' AND c.relnamespace = $1::regnamespace
              AND l.mode = 'RowShareLock' AND l.granted`,
          [BASE],
        );
        return held.n > 0;
      });
      const order: string[] = [];
      const writer = database.dataSource
        .query(`UPDATE ${BASE}.projection_offsets SET next_offset = next_offset + 1 WHERE partition = 0`)
        .then(() => order.push('version 1 wrote'));
      void activation.then(() => order.push('switched'));
      await poll('the version 1 writer to wait on the lock', async () => {
        const [waiting] = await database.dataSource.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE%'`,
        );
        return waiting.n > 0;
      });
      expect(order).toEqual([]);
      await storeOffsets(database.dataSource, V2, { 0: 50 });
      expect(await activation).toBe('activated');
      await writer;
      expect(order).toEqual(['switched', 'version 1 wrote']);
      expect(await statuses()).toEqual(['1 retired', '2 active']);
    });
  });
});

describe('ActiveProjection', () => {
  let database: Database;
  beforeAll(async () => (database = await openReadModelTestDatabase('active_projection', [BASE, V2])));
  afterAll(() => database?.close());

  it('follows a switch it is told of, and one it reads', async () => {
    const versions = new ProjectionVersions(database.dataSource, BASE);
    const active = new ActiveProjection(versions, await versions.register(1));
    expect([active.version, active.schema]).toEqual([1, BASE]);
    expect(active.follow({ version: 1, schema: BASE })).toBe(false);
    expect(await active.refresh()).toBe(false);

    await versions.register(2);
    expect(await versions.activateIfCaughtUp(2)).toBe('activated');
    expect(await active.refresh()).toBe(true);
    expect([active.version, active.schema]).toEqual([2, V2]);
    expect(active.follow({ version: 1, schema: BASE })).toBe(true);
    expect(active.schema).toBe(BASE);
  });
});
