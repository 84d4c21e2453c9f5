import { Global, Module } from '@nestjs/common';
import { AppendService } from './append/append.service';
import { AuthModule } from './auth/auth.module';
import { DeletionsController } from './deletions/deletions.controller';
import { GpodderModule } from './gpodder/gpodder.module';
import { SubscriptionsController } from './subscriptions/subscriptions.controller';
import { SyncDraftModule } from './sync-draft/sync-draft.module';
import { VersionsController } from './versions/versions.controller';
import { WebModule } from './web/web.module';

/** The write path (append, then wait until the projection applied it): one per application, shared
 * by the /v1 controllers, the sync draft's face and the gpodder.net face. */
@Global()
@Module({ providers: [AppendService], exports: [AppendService] })
export class AppendModule {}

/** The HTTP API: the Open Podcast API (/v1), its sync draft's face (SyncDraftModule: /auth,
 * /api/v1) and the gpodder.net face (GpodderModule, on unless GPODDER_API is off). Expects
 * RuntimeModule (config, database, event log). The web pages for people (WebModule, on unless WEB_UI
 * is off) sit beside them. */
@Module({
  imports: [AuthModule, AppendModule, SyncDraftModule, GpodderModule, WebModule],
  controllers: [SubscriptionsController, DeletionsController, VersionsController],
})
export class ApiModule {}
