import { loadConfig } from '@castlog/config';
import { LogEvent } from '@castlog/domain';
import { EventLog } from '@castlog/event-log';
import {
  ActiveProjection,
  Database,
  inTransaction,
  LocalCommits,
  OutcomesQuery,
  ProjectionVersions,
} from '@castlog/read-model';
import { Metrics } from '@castlog/runtime';
import { DependencyHealth } from '@castlog/supervision';
import { HttpException, Logger } from '@nestjs/common';
import {
  openReadModelTestDatabase,
  storeOffsets,
} from '../../../../libs/read-model/src/testing/read-model-database';
import { AppendService } from './append.service';

const BASE = 'rm';

const event: LogEvent = {
  type: 'SubscriptionsAddRequested',
  userId: 'user-1',
  items: [{ feedUrl: 'https://feeds.example/1', candidateGuid: '11111111-1111-4111-8111-111111111111' }],
};

/** The write path when the projection has applied the request but its outcome cannot be read: a
 * passing database error answers 503 "not yet known", never "lost". */
describe('AppendService', () => {
  let database: Database;
  let service: AppendService;

  beforeEach(async () => {
    database = await openReadModelTestDatabase('append_service', [BASE]);
    const versions = new ProjectionVersions(database.dataSource, BASE);
    const readModel = new ActiveProjection(versions, await versions.register(1));
    const config = loadConfig({ READ_YOUR_WRITES_TIMEOUT: '1s', RETRY_AFTER_SECONDS: '7' });
    // The log acknowledges every request at partition 0, offset 0.
    const eventLog = { append: async () => [{ partition: 0, offset: 0 }] } as unknown as EventLog;
    const health = new DependencyHealth();
    service = new AppendService(
      config,
      database,
      eventLog,
      readModel,
      new Metrics(health),
      health,
      new LocalCommits(),
    );
    await service.onModuleInit();
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await service?.onModuleDestroy();
    await database?.close();
  });

  it('answers 503 "not yet known" with Retry-After when reading the applied outcome keeps failing, and logs why', async () => {
    const reads = jest
      .spyOn(OutcomesQuery.prototype, 'atPositions')
      .mockRejectedValue(new Error('Connection terminated unexpectedly'));
    const warnings = jest.spyOn(Logger.prototype, 'warn');
    const errors = jest.spyOn(Logger.prototype, 'error');

    const answer = service.request(event, 'request-1').catch((error: unknown) => error);
    // The projector applies the record and stores its offset.
    await inTransaction(database.dataSource, (sql) => storeOffsets(sql, BASE, { 0: 1 }));

    const error = await answer;
    expect(error).toBeInstanceOf(HttpException);
    const unavailable = error as HttpException & { retryAfterSeconds: number };
    expect(unavailable.getStatus()).toBe(503);
    expect(unavailable.getResponse()).toEqual({
      code: '503',
      message: 'Service unavailable, retry later: the request was recorded, but its outcome is not yet known',
    });
    expect(unavailable.retryAfterSeconds).toBe(7);
    expect(reads.mock.calls.length).toBeGreaterThan(1);
    const warned = warnings.mock.calls.map(([message]) => String(message));
    expect(warned).toContainEqual(
      expect.stringMatching(/^reading the outcomes of 1 requests failed: Error: Connection terminated/),
    );
    expect(warned).toContainEqual(
      expect.stringMatching(/^request request-1: the outcome of event .* at 0:0 could not be read in time$/),
    );
    expect(errors).not.toHaveBeenCalled();
  });
});
