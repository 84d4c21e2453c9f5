import { ActiveProjection } from '@castlog/read-model';
import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ProjectionConsumer } from '../projection/projection.consumer';
import { FinalizeDeletionCommand } from './finalize-deletion.command';
import { FinalizeDeletionHandler } from './finalize-deletion.handler';

const SWEEP_INTERVAL_MS = 2000;

/** Finishes what a crash interrupted: runs the saga for pending deletions it never ran, and
 * appends results it never logged. Runs at start-up and then every few seconds, first re-reading
 * which projection version serves reads (another projector may have switched it). */
@Injectable()
export class DeletionRecoveryService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('DeletionSaga');
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;

  constructor(
    private readonly handler: FinalizeDeletionHandler,
    private readonly commandBus: CommandBus,
    private readonly readModel: ActiveProjection,
    private readonly projection: ProjectionConsumer,
  ) {}

  private async sweep(): Promise<void> {
    await this.readModel.refresh();
    if (!this.projection.ownsActiveVersion) return;
    await this.handler.sweep((userId, deletionId) =>
      this.commandBus.execute(new FinalizeDeletionCommand(userId, deletionId)),
    );
  }

  onApplicationBootstrap(): void {
    const tick = () => {
      this.sweeping = this.sweep()
        .catch((error: unknown) => this.logger.warn(`recovery sweep failed, will retry: ${String(error)}`))
        .finally(() => {
          this.sweeping = undefined;
          if (this.timer) this.timer = setTimeout(tick, SWEEP_INTERVAL_MS);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  async onModuleDestroy(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }
}
