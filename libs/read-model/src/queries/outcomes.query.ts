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
    return (await this.atOffsets(partition, [offset])).get(offset) ?? null;
  }

  /** The stored outcomes of the requests at these offsets of one partition, by offset; offsets not
   * yet applied are absent. One query for any number of requests. */
  async atOffsets(partition: number, offsets: readonly number[]): Promise<Map<number, RequestOutcome>> {
    const rows: { offset: string; outcome: RequestOutcome }[] = await this.dataSource.query(
      `SELECT "offset", outcome FROM ${quoteIdent(this.readModel.schema)}.request_outcomes
        WHERE partition = $1 AND "offset" = ANY($2::bigint[])`,
      [partition, offsets],
    );
    return new Map(rows.map((row) => [Number(row.offset), row.outcome]));
  }
}
