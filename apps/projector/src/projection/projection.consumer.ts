import { CONFIG, Config } from '@castlog/config';
import { EventLog, LogBatch, RunningConsumer } from '@castlog/event-log';
import { Database } from '@castlog/read-model';
import { DATABASE, EVENT_LOG, Metrics } from '@castlog/runtime';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { EventBus } from '@nestjs/cqrs';
import { DeletionAcceptedEvent } from '../deletion/deletion-accepted.event';
import { applyBatch } from './apply-batch';
import { storedOffset } from './checkpoint.store';

/** Consumes the log and applies it to the read model, one transaction per batch. */
@Injectable()
export class ProjectionConsumer implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ProjectionConsumer.name);
  private consumer?: RunningConsumer;

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(DATABASE) private readonly database: Database,
    @Inject(EVENT_LOG) private readonly eventLog: EventLog,
    private readonly eventBus: EventBus,
    private readonly metrics: Metrics,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { dataSource, schema } = this.database;
    this.consumer = await this.eventLog.consume({
      group: this.config.PROJECTOR_GROUP,
      maxBatchSize: this.config.PROJECTOR_BATCH_SIZE,
      startFrom: (partition) => storedOffset(dataSource, schema, partition),
      handle: (batch) => this.apply(batch),
      onError: (error) => this.logger.error(`projection stopped: ${String(error)}`),
    });
    this.logger.log(`projecting into schema ${schema} as group ${this.config.PROJECTOR_GROUP}`);
  }

  private async apply(batch: LogBatch): Promise<void> {
    const timer = this.metrics.batchDuration.startTimer();
    let result;
    try {
      result = await applyBatch(
        this.database.dataSource,
        this.database.schema,
        batch,
        this.eventLog.partitions,
      );
    } catch (error) {
      this.metrics.projectorErrors.inc();
      this.logger.warn(`partition ${batch.partition}: batch failed, it will be retried: ${String(error)}`);
      throw error;
    }
    const seconds = timer();
    if (result.applied > 0) {
      this.metrics.batchSize.observe(result.applied);
      this.logger.debug({
        msg: `partition ${batch.partition}: applied ${result.applied} events up to offset ${result.nextOffset} in ${(seconds * 1000).toFixed(1)} ms`,
        requestIds: batch.records.map((record) => record.requestId),
      });
    }
    for (const deletion of result.acceptedDeletions) {
      this.eventBus.publish(new DeletionAcceptedEvent(deletion.userId, deletion.deletionId));
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.consumer?.stop();
    this.consumer = undefined;
  }
}
