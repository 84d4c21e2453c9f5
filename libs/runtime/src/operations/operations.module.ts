import { Global, Module } from '@nestjs/common';
import { Metrics } from './metrics';
import { OperationsController } from './operations.controller';
import { ProjectionStatus } from './projection-status';

/** /health/live, /health/ready and /metrics, for every app. */
@Global()
@Module({
  controllers: [OperationsController],
  providers: [Metrics, ProjectionStatus],
  exports: [Metrics, ProjectionStatus],
})
export class OperationsModule {}
