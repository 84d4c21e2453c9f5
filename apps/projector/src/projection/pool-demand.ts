import { Config } from '@castlog/config';
import { PARALLEL_TRANSACTIONS } from '@castlog/projection';

/** Connections a projector's own work may hold at once with `lanes` projection lanes (two while a
 * new version is built and the active one kept current): each lane's transactions in flight, the
 * deletion saga's cascades, and one each for the recovery sweep, the projection switch check and
 * readiness's check. In a smaller pool they wait for one another, and a wait longer than
 * DATABASE_CONNECT_TIMEOUT fails. */
export const projectorConnections = (
  config: Pick<Config, 'DELETION_SAGA_CONCURRENCY'>,
  lanes: number,
): number => lanes * PARALLEL_TRANSACTIONS + config.DELETION_SAGA_CONCURRENCY + 3;

/** A warning when DATABASE_POOL_SIZE is smaller than `projectorConnections`; else undefined. */
export function poolTooSmall(
  config: Pick<Config, 'DATABASE_POOL_SIZE' | 'DELETION_SAGA_CONCURRENCY'>,
  lanes: number,
): string | undefined {
  const needed = projectorConnections(config, lanes);
  if (config.DATABASE_POOL_SIZE >= needed) return undefined;
  return (
    `DATABASE_POOL_SIZE (${config.DATABASE_POOL_SIZE}) is smaller than the ${needed} connections this ` +
    `projector may hold at once with ${lanes} projection lane${lanes === 1 ? '' : 's'} and ` +
    `DELETION_SAGA_CONCURRENCY ${config.DELETION_SAGA_CONCURRENCY}: its transactions will wait for ` +
    'connections, and fail after DATABASE_CONNECT_TIMEOUT'
  );
}
