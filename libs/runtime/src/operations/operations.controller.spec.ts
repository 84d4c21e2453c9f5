import { loadConfig } from '@castlog/config';
import type { Database } from '@castlog/read-model';
import { DependencyHealth } from '@castlog/supervision';
import { HttpException } from '@nestjs/common';
import { Metrics } from './metrics';
import { OperationsController, READINESS_CHECK_MS } from './operations.controller';
import type { ProjectionStatus } from './projection-status';

const never = () => new Promise<never>(() => undefined);

/** A controller over a read model and an event log that answer as given. */
function controllerWith(query: () => Promise<unknown>, lag: () => Promise<Map<number, number>>) {
  const database = { dataSource: { query } } as unknown as Database;
  const status = { lag, versions: () => [{ version: 1, schema: 'castlog' }] } as unknown as ProjectionStatus;
  const health = new DependencyHealth();
  return new OperationsController(loadConfig({}), database, status, new Metrics(health), health);
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
      async () => [{ '?column?': 1 }],
      async () => new Map([[0, 3]]),
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

  it('says how long a check has been failing from its second failure on, until it answers again', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    let refusing = true;
    const controller = controllerWith(
      () =>
        refusing ? Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')) : Promise.resolve([]),
      async () => new Map([[0, 0]]),
    );
    const message = async () => ((await refusal(controller.ready())).body as { message: string }).message;
    try {
      expect(await message()).toBe(
        'Service unavailable, retry later: read model: connect ECONNREFUSED 127.0.0.1:5432',
      );
      now += 34_000;
      expect(await message()).toBe(
        'Service unavailable, retry later: read model: connect ECONNREFUSED 127.0.0.1:5432 (failing for 34 s)',
      );
      refusing = false;
      await expect(controller.ready()).resolves.toMatchObject({ status: 'ok' });
      refusing = true;
      now += 60_000;
      expect(await message()).toBe(
        'Service unavailable, retry later: read model: connect ECONNREFUSED 127.0.0.1:5432',
      );
    } finally {
      jest.restoreAllMocks();
    }
  });
});
