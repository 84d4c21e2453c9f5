import { DependencyHealth, isUnavailableError, RecoveryProbe } from '@castlog/supervision';

/** Runs a request to the cluster and tells `health` whether the cluster answers, by its outcome. */
export type Reporting = <T>(work: () => Promise<T>) => Promise<T>;

/** An answer marks the log restored; a failure that says the cluster is out of reach hands it to
 * `recovery`, which probes until the cluster answers again, appends or not. */
export const reportingTo =
  (component: string, health?: DependencyHealth, recovery?: RecoveryProbe): Reporting =>
  async (work) => {
    try {
      const result = await work();
      health?.restored(component);
      return result;
    } catch (error) {
      if (isUnavailableError(error)) recovery?.lost(error);
      throw error;
    }
  };
