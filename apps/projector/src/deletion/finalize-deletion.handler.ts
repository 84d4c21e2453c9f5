import { CONFIG, Config } from '@castlog/config';
import { decide, LogEvent } from '@castlog/domain';
import { envelopeOf, EventLog } from '@castlog/event-log';
import { ActiveProjection, Database, DeletionSagaQuery, inTransaction, SagaRow } from '@castlog/read-model';
import { DATABASE, EVENT_LOG } from '@castlog/runtime';
import { isUnavailableError, messageOf } from '@castlog/supervision';
import { Inject, Logger, OnModuleDestroy, Optional } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import pLimit from 'p-limit';
import { loadStates, writeChanges } from '@castlog/projection';
import { DELETION_SAGA_FAULTS, DeletionSagaFaults } from './deletion-saga.faults';
import { FinalizeDeletionCommand, FinalizeDeletionResult } from './finalize-deletion.command';

/** Finalizes a deletion in two idempotent steps, each keyed by the deletion id:
 * 1. one transaction runs the cascade (the decider's DeletionCompleted changes) and records the
 *    saga's result; when it fails, it rolls back whole and the result FAILED is recorded instead —
 *    unless the database was out of reach, which leaves the deletion pending for the sweep;
 * 2. the result is appended to the log (DeletionCompleted / DeletionFailed) and marked logged.
 * A crash between the steps leaves an unlogged result, which the recovery sweep appends.
 * The read model itself changes only when the projector applies that event, at its position in the
 * log: the cascade runs under a savepoint that is rolled back once it has succeeded, so a failing
 * cascade (a constraint, a trigger) fails the saga, while what the projection holds stays a function
 * of the log alone and a replay rebuilds it equal.
 *
 * At most DELETION_SAGA_CONCURRENCY deletions run step 1 at once; the others wait their turn in
 * memory (and stay pending in the read model, where the sweep finds them after a restart). A
 * cascade's transaction waits for its user's clock lock while holding a pooled connection, and a
 * catch-up's transactions hold those locks for seconds: unbounded, the saga took every connection
 * of the pool from the projector, the sweep and readiness. */
@CommandHandler(FinalizeDeletionCommand)
export class FinalizeDeletionHandler implements ICommandHandler<FinalizeDeletionCommand>, OnModuleDestroy {
  private readonly logger = new Logger('DeletionSaga');
  /** Each deletion's finalization, running or waiting for its turn. */
  private readonly inFlight = new Map<number, Promise<FinalizeDeletionResult>>();
  private readonly turns: pLimit.Limit;
  private stopping = false;

  constructor(
    @Inject(DATABASE) private readonly database: Database,
    @Inject(EVENT_LOG) private readonly eventLog: EventLog,
    private readonly readModel: ActiveProjection,
    @Inject(CONFIG) config: Pick<Config, 'DELETION_SAGA_CONCURRENCY'>,
    /** Provided by tests only (test/cross-app/saga-crash.projector.ts crashes between the steps). */
    @Optional() @Inject(DELETION_SAGA_FAULTS) private readonly faults: DeletionSagaFaults = {},
  ) {
    this.turns = pLimit(config.DELETION_SAGA_CONCURRENCY);
  }

  async execute({ userId, deletionId }: FinalizeDeletionCommand): Promise<FinalizeDeletionResult> {
    if (this.inFlight.has(deletionId)) return 'ALREADY_FINALIZED';
    const finalization = this.finalize(userId, deletionId);
    this.inFlight.set(deletionId, finalization);
    try {
      return await finalization;
    } finally {
      this.inFlight.delete(deletionId);
    }
  }

  /** Finalizations waiting for their turn at step 1, holding no connection yet: a state tests wait for. */
  get waitingForTurn(): number {
    return this.turns.pendingCount;
  }

  /** Lets the finalizations under way end; the ones still waiting stay for the next start's sweep. */
  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    await Promise.allSettled(this.inFlight.values());
  }

  private async finalize(userId: string, deletionId: number): Promise<FinalizeDeletionResult> {
    try {
      // Only step 1 waits its turn: it is what holds a connection behind the clock lock.
      const row = await this.turns(async () =>
        this.stopping ? ('STOPPING' as const) : this.recordResult(userId, deletionId),
      );
      if (row === 'STOPPING') return 'DEFERRED';
      if (!row) return 'ALREADY_FINALIZED';
      await this.faults.afterCascade?.(deletionId);
      await this.logResult(row);
      return row.result;
    } catch (error) {
      // An unreachable database or log says nothing of the deletion: what is not done yet (the
      // cascade, or appending its recorded result) the recovery sweep does once they answer.
      if (!isUnavailableError(error)) throw error;
      this.logger.warn(`deletion ${deletionId} left to the recovery sweep: ${messageOf(error)}`);
      return 'DEFERRED';
    }
  }

  /** Step 1 with its outcome recorded: the cascade's row, or FAILED when the cascade failed (and
   * rolled back) for a reason other than an unreachable database. */
  private async recordResult(userId: string, deletionId: number): Promise<SagaRow | null> {
    try {
      return await this.runCascade(userId, deletionId);
    } catch (error) {
      if (isUnavailableError(error)) throw error;
      this.logger.warn(`deletion ${deletionId} failed and was rolled back: ${String(error)}`);
      return this.recordFailure(userId, deletionId, error);
    }
  }

  /** The saga acts on the projection version that serves reads. */
  private get saga(): DeletionSagaQuery {
    return new DeletionSagaQuery(this.readModel.schema);
  }

  /** Step 1. Answers the saga row (new or earlier), or null when the deletion is not pending. */
  private async runCascade(userId: string, deletionId: number): Promise<SagaRow | null> {
    // One schema for the whole cascade, even when reads switch versions meanwhile.
    const schema = this.readModel.schema;
    const saga = new DeletionSagaQuery(schema);
    return inTransaction(this.database.dataSource, async (sql) => {
      const clocks = await saga.lockClock(sql, userId);
      const { lastInstant } = clocks;
      const earlier = await saga.result(sql, deletionId);
      if (earlier) return earlier;
      const states = await loadStates(
        sql,
        schema,
        {
          users: new Set([userId]),
          guids: [],
          feedUrls: [],
          deletionIds: [[userId, deletionId]],
          deviceIds: [],
          syncIds: [],
          actionIds: [],
          settingsScopes: [],
          wholeUsers: new Set(),
        },
        new Map([[userId, clocks]]),
      );
      const state = states.get(userId);
      if (state?.deletions.get(deletionId)?.status !== 'PENDING') return null;
      const deletedAt = Math.max(Date.now(), lastInstant + 1);
      const event: LogEvent = { type: 'DeletionCompleted', userId, deletionId, deletedAt };
      const decision = decide(state, { event, sequence: -1 }, deletedAt);
      await sql.query('SAVEPOINT cascade');
      await writeChanges(sql, schema, decision.changes);
      await sql.query('ROLLBACK TO SAVEPOINT cascade');
      return (await saga.recordCompleted(sql, deletionId, userId, deletedAt)) ?? null;
    });
  }

  private async recordFailure(userId: string, deletionId: number, error: unknown): Promise<SagaRow | null> {
    const reason = error instanceof Error ? error.message : String(error);
    const { dataSource } = this.database;
    const saga = this.saga;
    await saga.recordFailed(dataSource, deletionId, userId, reason.slice(0, 1000));
    return (await saga.result(dataSource, deletionId)) ?? null;
  }

  /** Step 2: append the result to the log, then mark it logged. */
  async logResult(row: SagaRow): Promise<void> {
    if (row.logged) return;
    const deletionId = Number(row.deletion_id);
    const event: LogEvent =
      row.result === 'COMPLETED'
        ? { type: 'DeletionCompleted', userId: row.user_id, deletionId, deletedAt: Number(row.deleted_at) }
        : { type: 'DeletionFailed', userId: row.user_id, deletionId, reason: row.reason ?? '' };
    await this.eventLog.append([envelopeOf(event, `deletion-${deletionId}`)]);
    await this.saga.markLogged(this.database.dataSource, deletionId);
  }

  /** What a crash can leave behind: pending deletions the saga never ran, and results it never
   * logged. Stops at the first deletion left for later (its database or log out of reach). */
  async sweep(run: (userId: string, deletionId: number) => Promise<FinalizeDeletionResult>): Promise<void> {
    const { dataSource } = this.database;
    const saga = this.saga;
    for (const row of await saga.unlogged(dataSource)) await this.logResult(row);
    const pending = await saga.pendingWithoutResult(dataSource);
    for (const row of pending) if ((await run(row.user_id, Number(row.deletion_id))) === 'DEFERRED') return;
  }
}
