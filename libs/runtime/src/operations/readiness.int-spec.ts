import { loadConfig } from '@castlog/config';
import { poolOf } from '@castlog/read-model';
import { HttpException } from '@nestjs/common';
import type { PoolClient } from 'pg';
import { createTestDatabase } from '../../../../test/support/databases';
import { OpenedRuntime, openRuntime } from '../open-runtime';
import { Metrics } from './metrics';
import { OperationsController, READINESS_CHECK_MS } from './operations.controller';
import { ProjectionStatus } from './projection-status';

/** Readiness on a real pool: a check that finds no connection says so, with the pool's use, rather
 * than blaming PostgreSQL. */
describe('readiness on a pool whose every connection is in use', () => {
  let runtime: OpenedRuntime;
  let controller: OperationsController;

  beforeAll(async () => {
    const config = loadConfig({
      DATABASE_URL: await createTestDatabase('readiness'),
      DATABASE_POOL_SIZE: '2',
      LOG_LEVEL: 'warn',
    });
    runtime = await openRuntime(config);
    const status = new ProjectionStatus(config, runtime.database, runtime.eventLog, runtime.readModel);
    controller = new OperationsController(config, status, new Metrics(runtime.health), runtime.health);
  });
  afterAll(() => runtime?.close());

  it('answers 503 naming the pool while no connection is free, and ready once one is', async () => {
    await expect(controller.ready()).resolves.toMatchObject({ status: 'ok', projection_lag: 0 });

    const pool = poolOf(runtime.database.dataSource);
    const held: PoolClient[] = [await pool.connect(), await pool.connect()];
    let refusal: unknown;
    try {
      refusal = await controller.ready().catch((error: unknown) => error);
    } finally {
      for (const client of held) client.release();
    }
    expect(refusal).toBeInstanceOf(HttpException);
    expect((refusal as HttpException).getResponse()).toEqual({
      code: '503',
      message:
        `Service unavailable, retry later: read model: no connection within ${READINESS_CHECK_MS} ms ` +
        '(pool: 2 of 2 in use, 1 query waiting)',
    });

    await expect(controller.ready()).resolves.toMatchObject({ status: 'ok', projection_lag: 0 });
  });
});
