import { CONFIG, Config } from '@castlog/config';
import { EventLog } from '@castlog/event-log';
import {
  ActiveProjection,
  Database,
  DeletionsQuery,
  onPooledClient,
  PoolUse,
  poolUse,
  ProjectionVersion,
  storedOffsets,
} from '@castlog/read-model';
import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, EVENT_LOG } from '../tokens';

/** How far projections are behind the log, per partition. */
@Injectable()
export class ProjectionStatus {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(DATABASE) private readonly database: Database,
    @Inject(EVENT_LOG) private readonly eventLog: EventLog,
    private readonly readModel: ActiveProjection,
  ) {}

  /** The version serving reads and, when this process builds another one, that one too. */
  versions(): ProjectionVersion[] {
    const active = { version: this.readModel.version, schema: this.readModel.schema };
    const own = { version: this.config.PROJECTION_VERSION, schema: this.database.schema };
    return own.version === active.version ? [active] : [active, own];
  }

  /** Events not yet applied, per partition, of `schema` (default: the version serving reads). */
  async lag(schema = this.readModel.schema): Promise<Map<number, number>> {
    const [end, applied] = await Promise.all([this.logEnd(), this.applied(schema)]);
    return lagBetween(end, applied);
  }

  /** The log's next offset per partition: asks the event log alone (for the table log, PostgreSQL). */
  logEnd(): Promise<Map<number, number>> {
    return this.eventLog.endOffsets();
  }

  /** The next offset `schema` (default: the version serving reads) will apply, per partition it
   * has applied any of: asks the read model alone; `connected` once the pool has given it a
   * connection. */
  applied(schema = this.readModel.schema, connected?: () => void): Promise<Map<number, number>> {
    return onPooledClient(this.database.dataSource, (sql) => storedOffsets(sql, schema), connected);
  }

  /** The database pool now: its size, connections handed out, queries waiting for one. */
  pool(): PoolUse {
    return poolUse(this.database.dataSource);
  }

  deletionsByStatus(): Promise<Map<string, number>> {
    return new DeletionsQuery(this.database.dataSource, this.readModel).countByStatus();
  }
}

/** Events between what `applied` reached and the log's `end`, per partition of the log. */
export const lagBetween = (end: Map<number, number>, applied: Map<number, number>): Map<number, number> =>
  new Map(
    [...end].map(([partition, high]) => [partition, Math.max(0, high - (applied.get(partition) ?? 0))]),
  );
