import { RequestOutcome } from '@castlog/domain';
import { LogPosition } from '@castlog/event-log';
import { DataSource } from 'typeorm';
import { ReadSchema } from '../projection-versions';
import { poolOf, quoteIdent } from '../sql';

/** The key `OutcomesQuery.atPositions` answers by. */
export const positionKey = ({ partition, offset }: LogPosition): string => `${partition}:${offset}`;

/** A request's log position, and the id of the event it appended there when known: an outcome
 * stored at that position for another event (the log lost the request's record and gave its
 * offset to a later one) is not the request's. */
export type OutcomePosition = LogPosition & { readonly eventId?: string };

export class OutcomesQuery {
  constructor(
    private readonly dataSource: DataSource,
    private readonly readModel: ReadSchema,
  ) {}

  /** The stored outcome of the request at this log position, or null before it is applied. */
  async at(position: OutcomePosition): Promise<RequestOutcome | null> {
    return (await this.atPositions([position])).get(positionKey(position)) ?? null;
  }

  /** The stored outcomes of the requests at these log positions, by `positionKey`; positions not
   * yet applied are absent. One query for any number of requests, of any partitions. */
  async atPositions(positions: readonly OutcomePosition[]): Promise<Map<string, RequestOutcome>> {
    const { rows } = await poolOf(this.dataSource).query<{
      partition: number;
      offset: string;
      outcome: RequestOutcome;
    }>(
      `SELECT o.partition, o."offset", o.outcome FROM ${quoteIdent(this.readModel.schema)}.request_outcomes o
         JOIN unnest($1::int[], $2::bigint[], $3::uuid[]) AS p(partition, "offset", event_id)
           ON o.partition = p.partition AND o."offset" = p."offset"
          AND (p.event_id IS NULL OR o.event_id = p.event_id)`,
      [
        positions.map((p) => p.partition),
        positions.map((p) => p.offset),
        positions.map((p) => p.eventId ?? null),
      ],
    );
    return new Map(
      rows.map((row) => [positionKey({ partition: row.partition, offset: Number(row.offset) }), row.outcome]),
    );
  }
}
