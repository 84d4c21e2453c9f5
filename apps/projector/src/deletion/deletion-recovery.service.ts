import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { FinalizeDeletionCommand } from './finalize-deletion.command';
import { FinalizeDeletionHandler } from './finalize-deletion.handler';

const SWEEP_INTERVAL_MS = 2000;

/** Finishes what a crash interrupted: runs the saga for pending deletions it never ran, and
 * appends results it never logged. Runs at start-up and then every few seconds. */
@Injectable()
export class DeletionRecoveryService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('DeletionSaga');
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;

  constructor(
    private readonly handler: FinalizeDeletionHandler,
    private readonly commandBus: CommandBus,
  ) {}

  onApplicationBootstrap(): void {
    const tick = () => {
      this.sweeping = this.handler
        .sweep((userId, deletionId) =>
          this.commandBus.execute(new FinalizeDeletionCommand(userId, deletionId)),
        )
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
