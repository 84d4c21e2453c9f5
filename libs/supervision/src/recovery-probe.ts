import { retry } from './backoff';
import { DependencyHealth, messageOf } from './health';
import { ignoreLog, LogFn } from './log';

export interface RecoveryProbe {
  /** A failure that shows `component` out of reach: marks it down and starts the probe. */
  lost(error: unknown): void;
  /** Stops probing; call before closing what the probe uses. */
  close(): void;
}

/** After a loss, `probe` runs with capped backoff, one at a time, until it succeeds; then `health`
 * marks the component restored, whether or not the process used it meanwhile. */
export function recoveryProbe(
  component: string,
  health: DependencyHealth,
  probe: () => Promise<unknown>,
  log: LogFn = ignoreLog,
): RecoveryProbe {
  const closed = new AbortController();
  let probing = false;
  return {
    lost(error) {
      if (closed.signal.aborted) return;
      if (!health.isDown(component))
        log('warn', `${component}: connection lost (${messageOf(error)}); reconnecting`);
      health.lost(component, error);
      if (probing) return;
      probing = true;
      void retry(probe, {
        signal: closed.signal,
        onFailure: (failure) => health.lost(component, failure),
      }).then(() => {
        probing = false;
        if (closed.signal.aborted) return;
        health.restored(component);
        log('info', `${component}: reconnected`);
      });
    },
    close: () => closed.abort(),
  };
}
