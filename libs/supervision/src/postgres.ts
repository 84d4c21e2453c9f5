import type { Client, ClientConfig, Pool, PoolClient } from 'pg';
import { retry } from './backoff';
import { DependencyHealth, messageOf } from './health';
import { ignoreLog, LogFn } from './log';

/** Bounds for every castlog connection to PostgreSQL: a connection that cannot be had in time fails
 * (and its request answers 503) instead of waiting; TCP keep-alive notices a peer that vanished. */
export const connectionSettings = (
  connectTimeoutMs: number,
): Pick<ClientConfig, 'connectionTimeoutMillis' | 'keepAlive'> => ({
  connectionTimeoutMillis: connectTimeoutMs,
  keepAlive: true,
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
  const closed = new AbortController();
  const watched = new WeakSet<PoolClient>();
  let probing = false;

  const lost = (error: Error) => {
    if (closed.signal.aborted) return;
    if (!health.isDown(component))
      log('warn', `${component}: connection lost (${messageOf(error)}); reconnecting`);
    health.lost(component, error);
    if (probing) return;
    probing = true;
    void retry(() => pool.query('SELECT 1'), {
      signal: closed.signal,
      onFailure: (failure) => health.lost(component, failure),
    }).then(() => {
      probing = false;
      if (closed.signal.aborted) return;
      health.restored(component);
      log('info', `${component}: reconnected`);
    });
  };
  const watch = (client: PoolClient) => {
    if (watched.has(client)) return;
    watched.add(client);
    client.on('error', lost);
  };
  pool.on('connect', watch);
  pool.on('acquire', watch);
  pool.on('error', lost);
  return { close: () => closed.abort() };
}

/** A short-lived client (migrations, set-up) whose connection may still break: its pending query
 * rejects, and the `error` event it also emits must not end the process. */
export function quietClient(client: Client): Client {
  client.on('error', () => undefined);
  return client;
}
