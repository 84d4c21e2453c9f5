import { Client, Pool } from 'pg';
import { onServer } from '@castlog/infra';
import { createTestDatabase, terminateBackends } from '../../../test/support/databases';
import { until } from '../../../test/support/until';
import { DependencyHealth } from './health';
import { NotificationListener } from './notification-listener';
import { supervisePool } from './postgres';
import { isUnavailableError } from './unavailable';

const allowConnections = (adminUrl: string, database: string, allow: boolean): Promise<unknown> =>
  onServer(adminUrl, (admin) => admin.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS ${allow}`));

describe('PostgreSQL connections under faults', () => {
  let url: string;
  let database: string;
  const adminUrl = () => process.env.DATABASE_URL as string;

  beforeEach(async () => {
    url = await createTestDatabase('supervision');
    database = new URL(url).pathname.slice(1);
  });

  it('a supervised pool survives its backends being terminated, in use and idle, and reports the outage', async () => {
    const pool = new Pool({ connectionString: url, max: 4 });
    const health = new DependencyHealth();
    const seen: string[] = [];
    health.observe({
      lost: (component) => seen.push(`lost ${component}`),
      restored: (component) => seen.push(`restored ${component}`),
    });
    const supervision = supervisePool(pool, 'postgres', health);
    try {
      await pool.query('SELECT 1');
      // A client checked out for a transaction, in the middle of a statement: no pool listener on it.
      const busy = await pool.connect();
      await busy.query('BEGIN');
      const inFlight = busy.query('SELECT pg_sleep(30)').then(
        () => 'finished',
        (error: unknown) => error,
      );
      const idle = await pool.connect();
      idle.release();

      expect(await terminateBackends(adminUrl(), database)).toBeGreaterThanOrEqual(2);

      const failure = await inFlight;
      expect(isUnavailableError(failure)).toBe(true);
      busy.release(failure as Error);
      // The probe may reconnect within milliseconds: the transitions tell, not a look at the state.
      await until(
        adminUrl(),
        'the outage and the reconnection to be reported',
        async () => seen.includes('restored postgres') || undefined,
      );
      // (The in-use and the idle client may break on either side of a quick reconnection.)
      expect([seen[0], seen.at(-1)]).toEqual(['lost postgres', 'restored postgres']);
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      supervision.close();
      await pool.end();
    }
  });

  it('a notification listener reconnects after losing its connection, catches up, and hears notices again', async () => {
    const notices: string[] = [];
    let listenings = 0;
    let losses = 0;
    const health = new DependencyHealth();
    const listener = new NotificationListener(
      url,
      ['castlog_test_channel'],
      {
        notice: (_channel, payload) => notices.push(payload),
        listening: async () => void (listenings += 1),
        lost: () => void (losses += 1),
      },
      { component: 'test-notices', health },
    );
    await listener.start();
    try {
      expect(listenings).toBe(1);
      // The server refuses new connections for a while after the cut: the listener keeps trying.
      await allowConnections(adminUrl(), database, false);
      await terminateBackends(adminUrl(), database);
      await until(adminUrl(), 'the loss to be noticed', async () => losses === 1 || undefined);
      expect(health.isDown('test-notices')).toBe(true);
      expect(listener.isListening).toBe(false);
      await until(
        adminUrl(),
        'a reconnection attempt to be refused',
        async () =>
          /not currently accepting connections/.test(health.current()[0]?.reason ?? '') || undefined,
      );
      expect(listenings).toBe(1);
      await allowConnections(adminUrl(), database, true);

      await until(adminUrl(), 'the listener to listen again', async () => listenings === 2 || undefined);
      expect(health.isDown('test-notices')).toBe(false);
      const sender = new Client({ connectionString: url });
      await sender.connect();
      await sender.query(`SELECT pg_notify('castlog_test_channel', 'after reconnecting')`);
      await sender.end();
      await until(adminUrl(), 'the notice', async () => notices.includes('after reconnecting') || undefined);
      expect(losses).toBe(1);
    } finally {
      await allowConnections(adminUrl(), database, true);
      await listener.close();
    }
  });
});
