import { CONFIG, Config } from '@castlog/config';
import { EventLog, LogBatch, RunningConsumer } from '@castlog/event-log';
import { Database } from '@castlog/read-model';
import { DATABASE, EVENT_LOG } from '@castlog/runtime';
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
    const started = process.hrtime.bigint();
    const result = await applyBatch(
      this.database.dataSource,
      this.database.schema,
      batch,
      this.eventLog.partitions,
    );
    if (result.applied > 0) {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      this.logger.debug(
        `partition ${batch.partition}: applied ${result.applied} events up to ${result.nextOffset} in ${ms.toFixed(1)} ms`,
      );
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
