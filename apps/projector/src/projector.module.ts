import { Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { DeletionRecoveryService } from './deletion/deletion-recovery.service';
import { DeletionSaga } from './deletion/deletion.saga';
import { FinalizeDeletionHandler } from './deletion/finalize-deletion.handler';
import { ProjectionConsumer } from './projection/projection.consumer';

/** The projection consumer and the deletion saga. Expects RuntimeModule (config, database, log). */
@Module({
  imports: [CqrsModule.forRoot()],
  providers: [ProjectionConsumer, DeletionSaga, FinalizeDeletionHandler, DeletionRecoveryService],
})
export class ProjectorModule {}
