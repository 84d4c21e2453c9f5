import { ActiveProjection, Database, SyncQuery } from '@castlog/read-model';
import { DATABASE } from '@castlog/runtime';
import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { ClientIdGuard } from './client-id.guard';
import { SyncController } from './sync.controller';
import { SyncDraftAuthController } from './sync-draft-auth.controller';
import { SyncSubscriptionsController } from './sync-subscriptions.controller';

/** How `GET /v1/capabilities` names this face: the draft's revision it follows and its root. */
export const OPA_SYNC_DRAFT = { revision: '8d03a20', root: '/api/v1' } as const;

/** The Open Podcast API sync draft's face (CONTRACT, "The Open Podcast API sync draft"): token
 * endpoints under /auth, the sync endpoint and the subscription entities under /api/v1. Same users,
 * log and decider as /v1 and gpodder.net. Needs AppendService from a global module. */
@Module({
  imports: [AuthModule],
  controllers: [SyncDraftAuthController, SyncController, SyncSubscriptionsController],
  providers: [
    {
      provide: SyncQuery,
      inject: [DATABASE, ActiveProjection],
      useFactory: (database: Database, readModel: ActiveProjection) =>
        new SyncQuery(database.dataSource, readModel),
    },
    ClientIdGuard,
  ],
})
export class SyncDraftModule {}
