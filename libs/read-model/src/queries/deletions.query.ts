import { DeletionStatus } from '@castlog/domain';
import { DataSource } from 'typeorm';
import { ReadSchema } from '../projection-versions';
import { quoteIdent } from '../sql';

export class DeletionsQuery {
  constructor(
    private readonly dataSource: DataSource,
    private readonly readModel: ReadSchema,
  ) {}

  async status(userId: string, deletionId: number): Promise<DeletionStatus | null> {
    const rows: { status: DeletionStatus }[] = await this.dataSource.query(
      `SELECT status FROM ${quoteIdent(this.readModel.schema)}.deletions WHERE deletion_id = $1 AND user_id = $2`,
      [deletionId, userId],
    );
    return rows[0]?.status ?? null;
  }

  /** How many deletions there are in each status. */
  async countByStatus(): Promise<Map<string, number>> {
    const rows: { status: string; count: string }[] = await this.dataSource.query(
      `SELECT status, count(*) AS count FROM ${quoteIdent(this.readModel.schema)}.deletions GROUP BY status`,
    );
    return new Map(rows.map((row) => [row.status, Number(row.count)]));
  }
}
