import { Module } from '@nestjs/common';
import { AppendService } from './append/append.service';
import { AuthModule } from './auth/auth.module';
import { DeletionsController } from './deletions/deletions.controller';
import { SubscriptionsController } from './subscriptions/subscriptions.controller';

/** The HTTP API. Expects RuntimeModule (config, database, event log). */
@Module({
  imports: [AuthModule],
  controllers: [SubscriptionsController, DeletionsController],
  providers: [AppendService],
})
export class ApiModule {}
