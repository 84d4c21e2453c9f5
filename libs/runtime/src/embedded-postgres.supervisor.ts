import { findRunningPostgres, isAlive, RunningPostgres, startEmbeddedPostgres } from '@castlog/infra';
import { DependencyHealth, LogFn, retry } from '@castlog/supervision';

/** How often the server's process is looked at. */
const CHECK_MS = 500;
/** Restart attempts before giving up; with the backoff they span about half a minute. */
const RESTART_ATTEMPTS = 8;

/** Adopts a server someone else started meanwhile on `dataDir` (e.g. an operator's pg_ctl), or
 * starts one on `gone`'s port, with capped backoff; the last attempt's failure rejects, and
 * `stopped` makes it answer undefined. */
const startAgain = (
  gone: RunningPostgres,
  dataDir: string,
  stopped: AbortSignal,
  failed: (error: unknown, attempt: number) => void,
): Promise<RunningPostgres | undefined> =>
  retry(
    async () =>
      findRunningPostgres(dataDir) ??
      (await startEmbeddedPostgres({ dataDir, port: gone.port, detached: true })),
    { initialMs: 250, maxMs: 8_000, attempts: RESTART_ATTEMPTS, signal: stopped, onFailure: failed },
  );

export interface EmbeddedPostgresSupervisor {
  /** Stops watching, waits for a restart under way, and stops the server. */
  stop(): Promise<void>;
}

/** Watches the embedded PostgreSQL this process runs and, when its postmaster exits (killed, out of
 * memory, crashed), starts it again on the same data directory and port, so the pools and
 * listeners reconnect to the same URL; committed transactions survive in its WAL. After
 * RESTART_ATTEMPTS failed starts it calls `giveUp`, whose caller stops and exits. */
export function superviseEmbeddedPostgres(
  server: RunningPostgres,
  options: {
    dataDir: string;
    component: string;
    health: DependencyHealth;
    log: LogFn;
    giveUp: (reason: string) => void;
  },
): EmbeddedPostgresSupervisor {
  const { dataDir, component, health, log } = options;
  let current = server;
  let restarting: Promise<void> | undefined;
  const stopped = new AbortController();

  const restart = async (): Promise<void> => {
    const gone = current;
    log('error', `embedded PostgreSQL (pid ${gone.pid}) exited; restarting it on port ${gone.port}`);
    health.lost(component, new Error(`PostgreSQL (pid ${gone.pid}) exited`));
    try {
      const restarted = await startAgain(gone, dataDir, stopped.signal, (error, attempt) => {
        health.lost(component, error);
        log('warn', `restarting embedded PostgreSQL failed (attempt ${attempt}): ${String(error)}`);
      });
      if (!restarted) return;
      current = restarted;
      health.restored(component);
      log('info', `embedded PostgreSQL restarted (pid ${current.pid}, port ${current.port})`);
    } catch (failure) {
      if (stopped.signal.aborted) return;
      health.lost(component, failure);
      options.giveUp(
        `embedded PostgreSQL exited and could not be restarted after ${RESTART_ATTEMPTS} attempts ` +
          `(data directory ${dataDir}): ${String(failure)}`,
      );
    }
  };

  const timer = setInterval(() => {
    if (restarting || stopped.signal.aborted || isAlive(current.pid, 'postgres')) return;
    restarting = restart().finally(() => (restarting = undefined));
  }, CHECK_MS);
  timer.unref();

  return {
    async stop() {
      stopped.abort();
      clearInterval(timer);
      await restarting;
      await current.stop();
    },
  };
}
