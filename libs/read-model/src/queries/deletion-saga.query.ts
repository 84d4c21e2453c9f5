import { quoteIdent, Sql } from '../sql';
import { UserClocks } from '../user-clocks';

/** A row of `deletion_saga`: the saga's result for one deletion, and whether it is in the log. */
export interface SagaRow {
  deletion_id: string;
  user_id: string;
  result: 'COMPLETED' | 'FAILED';
  deleted_at: string | null;
  reason: string | null;
  logged: boolean;
}

/** The deletion saga's statements on the read model in `schema` (the version that serves reads). */
export class DeletionSagaQuery {
  private readonly s: string;

  constructor(schema: string) {
    this.s = quoteIdent(schema);
  }

  /** Locks the user's clock (the projector takes the same lock), creating it at 0 when missing;
   * answers its last instant and last sync cursor. Inside a transaction. */
  async lockClock(sql: Sql, userId: string): Promise<UserClocks> {
    await sql.query(
      `INSERT INTO ${this.s}.user_clocks (user_id, last_instant) VALUES ($1, 0) ON CONFLICT DO NOTHING`,
      [userId],
    );
    const [clock] = await sql.query<{ last_instant: string; sync_clock: string }>(
      `SELECT last_instant, sync_clock FROM ${this.s}.user_clocks WHERE user_id = $1 FOR UPDATE`,
      [userId],
    );
    return { lastInstant: Number(clock?.last_instant ?? 0), syncClock: Number(clock?.sync_clock ?? 0) };
  }

  async result(sql: Sql, deletionId: number): Promise<SagaRow | undefined> {
    const [row] = await sql.query<SagaRow>(`SELECT * FROM ${this.s}.deletion_saga WHERE deletion_id = $1`, [
      deletionId,
    ]);
    return row;
  }

  async recordCompleted(
    sql: Sql,
    deletionId: number,
    userId: string,
    deletedAt: number,
  ): Promise<SagaRow | undefined> {
    const [row] = await sql.query<SagaRow>(
      `INSERT INTO ${this.s}.deletion_saga (deletion_id, user_id, result, deleted_at)
         VALUES ($1, $2, 'COMPLETED', $3) RETURNING *`,
      [deletionId, userId, deletedAt],
    );
    return row;
  }

  /** Records FAILED unless a result is recorded already. */
  async recordFailed(sql: Sql, deletionId: number, userId: string, reason: string): Promise<void> {
    await sql.query(
      `INSERT INTO ${this.s}.deletion_saga (deletion_id, user_id, result, reason)
       VALUES ($1, $2, 'FAILED', $3) ON CONFLICT (deletion_id) DO NOTHING`,
      [deletionId, userId, reason],
    );
  }

  async markLogged(sql: Sql, deletionId: number): Promise<void> {
    await sql.query(`UPDATE ${this.s}.deletion_saga SET logged = true WHERE deletion_id = $1`, [deletionId]);
  }

  /** Results not yet appended to the log, oldest first, at most 1000. */
  unlogged(sql: Sql): Promise<SagaRow[]> {
    return sql.query<SagaRow>(
      `SELECT * FROM ${this.s}.deletion_saga WHERE NOT logged ORDER BY deletion_id LIMIT 1000`,
    );
  }

  /** How many results are not yet appended to the log. */
  async countUnlogged(sql: Sql): Promise<number> {
    const [saga] = await sql.query<{ unlogged: number }>(
      `SELECT count(*)::int AS unlogged FROM ${this.s}.deletion_saga WHERE NOT logged`,
    );
    return saga?.unlogged ?? 0;
  }

  /** Pending deletions the saga has no result for, oldest first, at most 1000. */
  pendingWithoutResult(sql: Sql): Promise<{ user_id: string; deletion_id: string }[]> {
    return sql.query<{ user_id: string; deletion_id: string }>(
      `SELECT d.user_id, d.deletion_id FROM ${this.s}.deletions d
        WHERE d.status = 'PENDING'
          AND NOT EXISTS (SELECT 1 FROM ${this.s}.deletion_saga g WHERE g.deletion_id = d.deletion_id)
        ORDER BY d.deletion_id LIMIT 1000`,
    );
  }
}
