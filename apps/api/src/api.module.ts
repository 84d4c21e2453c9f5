import { Module } from '@nestjs/common';
import { AppendService } from './append/append.service';
import { AuthModule } from './auth/auth.module';
import { DeletionsController } from './deletions/deletions.controller';
import { SubscriptionsController } from './subscriptions/subscriptions.controller';
import { VersionsController } from './versions/versions.controller';

/** The HTTP API. Expects RuntimeModule (config, database, event log). */
@Module({
  imports: [AuthModule],
  controllers: [SubscriptionsController, DeletionsController, VersionsController],
  providers: [AppendService],
})
export class ApiModule {}
