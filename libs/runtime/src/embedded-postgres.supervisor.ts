import { findRunningPostgres, isAlive, RunningPostgres, startEmbeddedPostgres } from '@castlog/infra';
import { Backoff, DependencyHealth, LogFn, pause } from '@castlog/supervision';

/** How often the server's process is looked at. */
const CHECK_MS = 500;
/** Restart attempts before giving up; with the backoff they span about half a minute. */
const RESTART_ATTEMPTS = 8;

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
    const backoff = new Backoff({ initialMs: 250, maxMs: 8_000 });
    let failure: unknown;
    while (backoff.failures < RESTART_ATTEMPTS && !stopped.signal.aborted) {
      try {
        // Adopt a server someone else started meanwhile, e.g. an operator's pg_ctl.
        current =
          findRunningPostgres(dataDir) ??
          (await startEmbeddedPostgres({ dataDir, port: gone.port, detached: true }));
        health.restored(component);
        log('info', `embedded PostgreSQL restarted (pid ${current.pid}, port ${current.port})`);
        return;
      } catch (error) {
        failure = error;
        health.lost(component, error);
        const delayMs = backoff.next();
        log('warn', `restarting embedded PostgreSQL failed (attempt ${backoff.failures}): ${String(error)}`);
        await pause(delayMs, stopped.signal);
      }
    }
    if (!stopped.signal.aborted)
      options.giveUp(
        `embedded PostgreSQL exited and could not be restarted after ${RESTART_ATTEMPTS} attempts ` +
          `(data directory ${dataDir}): ${String(failure)}`,
      );
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
