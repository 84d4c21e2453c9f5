import { EventLog } from '@castlog/event-log';
import { deficit, ProjectionVersions, storedOffsets } from '@castlog/read-model';
import Table from 'cli-table3';
import { DataSource } from 'typeorm';
import { CommandIo, runCommand } from './command-io';

export interface ProjectionsDeps extends Omit<CommandIo, 'stdin'> {
  readonly dataSource: DataSource;
  readonly eventLog: EventLog;
  readonly versions: ProjectionVersions;
}

/** One projection version, as `--json` prints it. */
export interface ProjectionEntry {
  readonly version: number;
  readonly schema: string;
  readonly status: string;
  readonly registeredAt: string;
  readonly activatedAt: string | null;
  /** Events applied, over all partitions. */
  readonly applied: number;
  /** Events in the log not yet applied, over all partitions. */
  readonly lag: number;
}

/** `castlog projections [--json]`: the read model's projection versions, which one serves reads,
 * and how far each has got through the log. */
export function projections(deps: ProjectionsDeps, options: { json?: boolean } = {}): Promise<number> {
  return runCommand(deps, async () => {
    const end = await deps.eventLog.endOffsets();
    const entries: ProjectionEntry[] = [];
    for (const version of await deps.versions.list()) {
      const stored = await storedOffsets(deps.dataSource, version.schema).catch(
        () => new Map<number, number>(),
      );
      const applied = [...end.keys()].reduce((sum, partition) => sum + (stored.get(partition) ?? 0), 0);
      const lag = deficit(end, stored);
      entries.push({
        version: version.version,
        schema: version.schema,
        status: version.status,
        registeredAt: version.registeredAt.toISOString(),
        activatedAt: version.activatedAt?.toISOString() ?? null,
        applied,
        lag,
      });
    }
    if (options.json) {
      deps.stdout.write(`${JSON.stringify(entries, null, 2)}\n`);
      return 0;
    }
    const table = new Table({
      head: ['version', 'schema', 'status', 'applied', 'lag', 'activated'],
      style: { head: [], border: [] },
    });
    for (const entry of entries)
      table.push([
        entry.version,
        entry.schema,
        entry.status,
        entry.applied,
        entry.lag,
        entry.activatedAt ?? '',
      ]);
    deps.stdout.write(`${table.toString()}\n`);
    return 0;
  });
}
