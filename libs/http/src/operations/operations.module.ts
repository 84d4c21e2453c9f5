import { Module } from '@nestjs/common';
import { OperationsController } from './operations.controller';

/** /health/live, /health/ready and /metrics, for every app. Expects an OperationsReport and the
 * configuration among the global providers (the runtime's). */
@Module({ controllers: [OperationsController] })
export class OperationsModule {}
