import { RequestOutcome } from '@castlog/domain';
import { DataSource } from 'typeorm';
import { ReadSchema } from '../projection-versions';
import { quoteIdent } from '../sql';

export class OutcomesQuery {
  constructor(
    private readonly dataSource: DataSource,
    private readonly readModel: ReadSchema,
  ) {}

  /** The stored outcome of the request at this log position, or null before it is applied. */
  async at(partition: number, offset: number): Promise<RequestOutcome | null> {
    const rows: { outcome: RequestOutcome }[] = await this.dataSource.query(
      `SELECT outcome FROM ${quoteIdent(this.readModel.schema)}.request_outcomes WHERE partition = $1 AND "offset" = $2`,
      [partition, offset],
    );
    return rows[0]?.outcome ?? null;
  }
}
