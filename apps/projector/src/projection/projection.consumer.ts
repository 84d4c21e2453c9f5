import { CONFIG, Config } from '@castlog/config';
import { EventLog, LogBatch, RunningConsumer } from '@castlog/event-log';
import {
  ActiveProjection,
  Database,
  LocalCommits,
  ProjectionVersion,
  projectorGroup,
  storedOffset,
} from '@castlog/read-model';
import { DATABASE, EVENT_LOG, Metrics } from '@castlog/runtime';
import { DependencyHealth, messageOf } from '@castlog/supervision';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { EventBus } from '@nestjs/cqrs';
import { DeletionAcceptedEvent } from '../deletion/deletion-accepted.event';
import { AppliedBatch, applyBatch, batchTransactions } from '@castlog/projection';
import { poolTooSmall } from './pool-demand';

/** How often a version being built checks whether it has caught up with the active one. */
const SWITCH_CHECK_MS = 250;
/** The health component of a projection lane whose batches fail. */
const PROJECTION = 'projection';

/** `3, 4, 5, 9` as `3–5, 9`. */
const describeOffsets = (offsets: readonly number[]): string =>
  offsets
    .reduce<[number, number][]>((runs, offset) => {
      const last = runs[runs.length - 1];
      if (last && offset === last[1] + 1) last[1] = offset;
      else runs.push([offset, offset]);
      return runs;
    }, [])
    .map(([from, to]) => (from === to ? `${from}` : `${from}–${to}`))
    .join(', ');

interface Lane {
  readonly version: ProjectionVersion;
  readonly consumer: RunningConsumer;
}

/** Consumes the log and applies it to the read model: the batches the log hands over together go
 * into one transaction (`batchTransactions`).
 *
 * It builds this release's projection version (PROJECTION_VERSION) in its own schema under its own
 * consumer group. When that version is newer than the active one, it is rebuilt from offset 0
 * while this projector also keeps the active version current, so the API goes on reading and
 * acknowledging writes; once the new version has caught up it takes over reads and the old lane
 * stops. */
@Injectable()
export class ProjectionConsumer implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ProjectionConsumer.name);
  private own?: Lane;
  private previous?: Lane;
  private switchTimer?: NodeJS.Timeout;
  private switching?: Promise<void>;

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(DATABASE) private readonly database: Database,
    @Inject(EVENT_LOG) private readonly eventLog: EventLog,
    private readonly readModel: ActiveProjection,
    private readonly eventBus: EventBus,
    private readonly metrics: Metrics,
    private readonly health: DependencyHealth,
    private readonly commits: LocalCommits,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const own: ProjectionVersion = { version: this.config.PROJECTION_VERSION, schema: this.database.schema };
    this.readModel.follow(await this.readModel.versions.register(own.version));
    this.own = await this.project(own);
    const active: ProjectionVersion = { version: this.readModel.version, schema: this.readModel.schema };
    if (active.version < own.version) {
      this.logger.log(
        `building projection version ${own.version} from offset 0; version ${active.version} ` +
          `(schema ${active.schema}) serves reads and is kept current until version ${own.version} has caught up`,
      );
      this.previous = await this.project(active);
      this.scheduleSwitchCheck();
    }
    const tooSmall = poolTooSmall(this.config, this.previous ? 2 : 1);
    if (tooSmall) this.logger.warn(tooSmall);
    if (active.version > own.version) {
      this.logger.warn(
        `projection version ${active.version} serves reads; this projector builds the older version ` +
          `${own.version} and runs no deletion saga: it can be stopped`,
      );
    }
  }

  /** Whether the deletion saga of this process may act on the version that serves reads: never on
   * a version newer than the one this release builds. */
  get ownsActiveVersion(): boolean {
    return this.readModel.version <= this.config.PROJECTION_VERSION;
  }

  private async project(version: ProjectionVersion): Promise<Lane> {
    const group = projectorGroup(this.config.PROJECTOR_GROUP, version.version);
    const transactions = batchTransactions(
      (batches) => this.apply(version, batches),
      this.config.PROJECTOR_BATCH_SIZE,
    );
    const lane = `${PROJECTION} v${version.version}`;
    const consumer = await this.eventLog.consume({
      group,
      maxBatchSize: this.config.PROJECTOR_BATCH_SIZE,
      startFrom: (partition) => storedOffset(this.database.dataSource, version.schema, partition),
      handle: async (batch) => {
        await transactions.submit([batch]);
      },
      // The log retries with backoff; the lane is reported down until it is past every failure.
      onError: (error) => {
        if (!this.health.isDown(lane))
          this.logger.warn(`${lane}: stalled (${messageOf(error)}); retrying with backoff`);
        this.health.lost(lane, error);
      },
      onRecovered: () => {
        const outage = this.health.current().find(({ component }) => component === lane);
        this.health.restored(lane);
        if (outage)
          this.logger.log(
            `${lane}: projecting again after ${Math.round((Date.now() - outage.since) / 1000)} s`,
          );
      },
    });
    this.logger.log(`projecting version ${version.version} into schema ${version.schema} as group ${group}`);
    return { version, consumer };
  }

  private scheduleSwitchCheck(): void {
    this.switchTimer = setTimeout(() => {
      this.switching = this.checkSwitch()
        .catch((error: unknown) => this.logger.warn(`projection switch check failed: ${String(error)}`))
        .finally(() => {
          this.switching = undefined;
          if (this.previous && this.switchTimer) this.scheduleSwitchCheck();
        });
    }, SWITCH_CHECK_MS);
  }

  private async checkSwitch(): Promise<void> {
    const own = this.config.PROJECTION_VERSION;
    const result = await this.readModel.versions.activateIfCaughtUp(own);
    if (result === 'behind') return;
    const previous = this.previous;
    this.readModel.follow({ version: own, schema: this.database.schema });
    this.previous = undefined;
    if (result === 'activated') {
      this.logger.log(
        `projection version ${own} has caught up with version ${previous?.version.version} and now serves reads`,
      );
    }
    await previous?.consumer.stop();
  }

  /** Applies batches in one transaction; answers each batch's result, in input order. */
  private async apply(version: ProjectionVersion, batches: LogBatch[]): Promise<AppliedBatch[]> {
    const timer = this.metrics.batchDuration.startTimer();
    const partitions = batches.map((batch) => batch.partition).join(',');
    let results: AppliedBatch[];
    try {
      results = await applyBatch(this.database.dataSource, version.schema, batches, this.eventLog.partitions);
    } catch (error) {
      this.metrics.projectorErrors.inc();
      this.logger.warn(
        `version ${version.version}, partitions ${partitions}: batch failed, it will be retried: ${messageOf(error)}`,
      );
      throw error;
    }
    const seconds = timer();
    const applied = results.reduce((sum, result) => sum + result.applied, 0);
    if (applied > 0) {
      this.commits.publish({ schema: version.schema, partitions: results });
      this.metrics.batchSize.observe(applied);
      this.logger.debug({
        msg: `version ${version.version}, partitions ${partitions}: applied ${applied} events in ${(seconds * 1000).toFixed(1)} ms`,
        offsets: Object.fromEntries(results.map((result) => [result.partition, result.nextOffset])),
        requestIds: batches.flatMap((batch) => batch.records.map((record) => record.requestId)),
      });
    }
    for (const { partition, reusedOffsets } of results) {
      if (reusedOffsets.length === 0) continue;
      this.metrics.reusedOffsets.inc({ partition: String(partition) }, reusedOffsets.length);
      this.logger.error(
        `version ${version.version}, partition ${partition}: the log holds other events than the ones applied ` +
          `at offsets ${describeOffsets(reusedOffsets)}: it lost records it had acknowledged and gave their ` +
          `offsets to new events, which are not applied. The read model no longer follows the log; ` +
          `see docs/operations.md, "The log lost records"`,
      );
    }
    // The saga finalizes deletions in the version that serves reads; a version being built learns
    // their results from the log.
    if (version.schema === this.readModel.schema && this.ownsActiveVersion) {
      for (const deletion of results.flatMap((result) => result.acceptedDeletions)) {
        this.eventBus.publish(new DeletionAcceptedEvent(deletion.userId, deletion.deletionId));
      }
    }
    const byPartition = new Map(results.map((result) => [result.partition, result]));
    return batches.map((batch) => byPartition.get(batch.partition) as AppliedBatch);
  }

  async onModuleDestroy(): Promise<void> {
    clearTimeout(this.switchTimer);
    this.switchTimer = undefined;
    await this.switching;
    await Promise.all([this.own?.consumer.stop(), this.previous?.consumer.stop()]);
    this.own = undefined;
    this.previous = undefined;
  }
}
