import { EventLog } from '@castlog/event-log';
import { Database } from '@castlog/read-model';
import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, EVENT_LOG } from '../tokens';

/** How far the read model is behind the log, per partition. */
@Injectable()
export class ProjectionStatus {
  constructor(
    @Inject(DATABASE) private readonly database: Database,
    @Inject(EVENT_LOG) private readonly eventLog: EventLog,
  ) {}

  async lag(): Promise<Map<number, number>> {
    const [end, stored] = await Promise.all([
      this.eventLog.endOffsets(),
      this.database.dataSource.query(
        `SELECT partition, next_offset FROM "${this.database.schema}".projection_offsets`,
      ),
    ]);
    const applied = new Map<number, number>(
      (stored as { partition: number; next_offset: string }[]).map((row) => [
        row.partition,
        Number(row.next_offset),
      ]),
    );
    return new Map(
      [...end].map(([partition, high]) => [partition, Math.max(0, high - (applied.get(partition) ?? 0))]),
    );
  }

  async deletionsByStatus(): Promise<Map<string, number>> {
    const rows: { status: string; count: string }[] = await this.database.dataSource.query(
      `SELECT status, count(*) AS count FROM "${this.database.schema}".deletions GROUP BY status`,
    );
    return new Map(rows.map((row) => [row.status, Number(row.count)]));
  }
}
