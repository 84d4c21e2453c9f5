import type { Client, ClientConfig, Pool, PoolClient } from 'pg';
import { DependencyHealth } from './health';
import { ignoreLog, LogFn } from './log';
import { recoveryProbe } from './recovery-probe';

/** Bounds for every castlog connection to PostgreSQL: a connection that cannot be had in time fails
 * (and its request answers 503) instead of waiting; TCP keep-alive notices a peer that vanished. */
export const connectionSettings = (
  connectTimeoutMs: number,
): Pick<ClientConfig, 'connectionTimeoutMillis' | 'keepAlive' | 'keepAliveInitialDelayMillis'> => ({
  connectionTimeoutMillis: connectTimeoutMs,
  keepAlive: true,
  // The system's default waits two hours before the first probe: an idle LISTEN connection that a
  // network silently dropped would leave its listener deaf that long.
  keepAliveInitialDelayMillis: 10_000,
});

export interface PoolSupervision {
  /** Stops probing; call before ending the pool. */
  close(): void;
}

/** Keeps a pg pool from taking the process down and tells `health` whether it can reach its server.
 * pg emits `error` on a client whose connection breaks, and a client checked out of the pool has no
 * listener of the pool's while in use: an unhandled `error` event would end the process. Every
 * client gets one here. The pool itself replaces broken clients on the next checkout; after a loss,
 * a probe (SELECT 1, with capped backoff) marks the component restored once the server answers. */
export function supervisePool(
  pool: Pool,
  component: string,
  health: DependencyHealth,
  log: LogFn = ignoreLog,
): PoolSupervision {
  const recovery = recoveryProbe(component, health, () => pool.query('SELECT 1'), log);
  const lost = (error: Error) => recovery.lost(error);
  const watched = new WeakSet<PoolClient>();
  const watch = (client: PoolClient) => {
    if (watched.has(client)) return;
    watched.add(client);
    client.on('error', lost);
  };
  pool.on('connect', watch);
  pool.on('acquire', watch);
  pool.on('error', lost);
  return { close: recovery.close };
}

/** A short-lived client (migrations, set-up) whose connection may still break: its pending query
 * rejects, and the `error` event it also emits must not end the process. */
export function quietClient(client: Client): Client {
  client.on('error', () => undefined);
  return client;
}
