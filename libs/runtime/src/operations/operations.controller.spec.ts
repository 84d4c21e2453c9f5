import { loadConfig } from '@castlog/config';
import type { EventLog } from '@castlog/event-log';
import type { ActiveProjection, Database } from '@castlog/read-model';
import { DependencyHealth } from '@castlog/supervision';
import { HttpException } from '@nestjs/common';
import { Metrics } from './metrics';
import { OperationsController, READINESS_CHECK_MS } from './operations.controller';
import { ProjectionStatus } from './projection-status';

const never = () => new Promise<never>(() => undefined);

/** A controller whose read model answers its queries with `query` (on a connection its pool hands
 * over at once) and whose event log answers its end offsets with `endOffsets`, through the
 * process's own ProjectionStatus. */
function controllerWith(query: () => Promise<unknown>, endOffsets: () => Promise<Map<number, number>>) {
  const client = { query: async () => ({ rows: await query() }), release: () => undefined };
  const pool = { connect: async () => client };
  const database = { schema: 'castlog', dataSource: { driver: { master: pool } } } as unknown as Database;
  const eventLog = { endOffsets } as unknown as EventLog;
  const config = loadConfig({});
  const status = new ProjectionStatus(config, database, eventLog, {
    version: 1,
    schema: 'castlog',
  } as ActiveProjection);
  const health = new DependencyHealth();
  return new OperationsController(config, status, new Metrics(health), health);
}

async function refusal(ready: Promise<unknown>): Promise<{ status: number; body: unknown }> {
  const error = await ready.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof HttpException)) throw new Error(`expected a 503, got ${String(error)}`);
  return { status: error.getStatus(), body: error.getResponse() };
}

describe('OperationsController: /health/ready', () => {
  it('is ready when the read model and the event log answer and the projection keeps up', async () => {
    const controller = controllerWith(
      async () => [{ partition: 0, next_offset: '7' }],
      async () => new Map([[0, 10]]),
    );
    await expect(controller.ready()).resolves.toEqual({
      status: 'ok',
      projection_version: 1,
      projection_lag: 3,
    });
  });

  it('answers 503 naming the read model when PostgreSQL holds the query without answering', async () => {
    const controller = controllerWith(never, async () => new Map());
    const started = Date.now();
    expect(await refusal(controller.ready())).toEqual({
      status: 503,
      body: {
        code: '503',
        message: `Service unavailable, retry later: read model: no answer within ${READINESS_CHECK_MS} ms`,
      },
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(READINESS_CHECK_MS - 10);
  });

  it('answers 503 naming the event log when Kafka holds the offsets request without answering', async () => {
    const controller = controllerWith(async () => [], never);
    expect(await refusal(controller.ready())).toEqual({
      status: 503,
      body: {
        code: '503',
        message: `Service unavailable, retry later: event log: no answer within ${READINESS_CHECK_MS} ms`,
      },
    });
  });

  it('answers 503 with the error of a dependency that refuses', async () => {
    const controller = controllerWith(
      () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')),
      async () => new Map(),
    );
    expect((await refusal(controller.ready())).body).toEqual({
      code: '503',
      message: 'Service unavailable, retry later: read model: connect ECONNREFUSED 127.0.0.1:5432',
    });
  });

  it("names each dependency that holds its request, in one check's time", async () => {
    const controller = controllerWith(never, never);
    const started = Date.now();
    expect((await refusal(controller.ready())).body).toEqual({
      code: '503',
      message:
        `Service unavailable, retry later: read model: no answer within ${READINESS_CHECK_MS} ms; ` +
        `event log: no answer within ${READINESS_CHECK_MS} ms`,
    });
    expect(Date.now() - started).toBeLessThan(2 * READINESS_CHECK_MS);
  });
});
