import { loadConfig } from '@castlog/config';
import { poolOf } from '@castlog/read-model';
import type { PoolClient } from 'pg';
import { createTestDatabase } from '../../../../test/support/databases';
import { OpenedRuntime, openRuntime } from '../open-runtime';
import { Metrics } from './metrics';
import { ProcessReport, READINESS_CHECK_MS } from './readiness';
import { ProjectionStatus } from './projection-status';

/** Readiness on a real pool: a check that finds no connection says so, with the pool's use, rather
 * than blaming PostgreSQL. */
describe('readiness on a pool whose every connection is in use', () => {
  let runtime: OpenedRuntime;
  let report: ProcessReport;

  beforeAll(async () => {
    const config = loadConfig({
      DATABASE_URL: await createTestDatabase('readiness'),
      DATABASE_POOL_SIZE: '2',
      LOG_LEVEL: 'warn',
    });
    runtime = await openRuntime(config);
    const status = new ProjectionStatus(config, runtime.database, runtime.eventLog, runtime.readModel);
    report = new ProcessReport(config, status, new Metrics(runtime.health), runtime.health);
  });
  afterAll(() => runtime?.close());

  it('answers 503 naming the pool while no connection is free, and ready once one is', async () => {
    await expect(report.readiness()).resolves.toMatchObject({ ready: true, projectionLag: 0 });

    const pool = poolOf(runtime.database.dataSource);
    const held: PoolClient[] = [await pool.connect(), await pool.connect()];
    let refusal: unknown;
    try {
      refusal = await report.readiness();
    } finally {
      for (const client of held) client.release();
    }
    expect(refusal).toEqual({
      ready: false,
      reason:
        `read model: no connection within ${READINESS_CHECK_MS} ms ` +
        '(pool: 2 of 2 in use, 1 query waiting)',
    });

    await expect(report.readiness()).resolves.toMatchObject({ ready: true, projectionLag: 0 });
  });
});
