import { DeletionStatus } from '@castlog/domain';
import { DataSource } from 'typeorm';

export class DeletionsQuery {
  constructor(
    private readonly dataSource: DataSource,
    private readonly schema: string,
  ) {}

  async status(userId: string, deletionId: number): Promise<DeletionStatus | null> {
    const rows: { status: DeletionStatus }[] = await this.dataSource.query(
      `SELECT status FROM "${this.schema}".deletions WHERE deletion_id = $1 AND user_id = $2`,
      [deletionId, userId],
    );
    return rows[0]?.status ?? null;
  }
}
