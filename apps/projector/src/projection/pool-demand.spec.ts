import { loadConfig } from '@castlog/config';
import { PARALLEL_TRANSACTIONS } from '@castlog/projection';
import { poolTooSmall, projectorConnections } from './pool-demand';

describe("the projector's pool", () => {
  it('holds, by default, what one lane, the saga, the sweep and the checks hold at once', () => {
    const config = loadConfig({});
    expect(projectorConnections(config, 1)).toBe(
      PARALLEL_TRANSACTIONS + config.DELETION_SAGA_CONCURRENCY + 3,
    );
    expect(poolTooSmall(config, 1)).toBeUndefined();
  });

  it('is said to be too small for two lanes at the default size', () =>
    expect(poolTooSmall(loadConfig({}), 2)).toBe(
      'DATABASE_POOL_SIZE (10) is smaller than the 13 connections this projector may hold at once with ' +
        '2 projection lanes and DELETION_SAGA_CONCURRENCY 2: its transactions will wait for connections, ' +
        'and fail after DATABASE_CONNECT_TIMEOUT',
    ));

  it('is enough when DATABASE_POOL_SIZE covers them', () =>
    expect(poolTooSmall(loadConfig({ DATABASE_POOL_SIZE: '13' }), 2)).toBeUndefined());
});
