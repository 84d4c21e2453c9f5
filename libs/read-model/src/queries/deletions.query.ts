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
}
