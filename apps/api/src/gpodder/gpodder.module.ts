import { CONFIG, Config } from '@castlog/config';
import { ActiveProjection, Database, GpodderQuery } from '@castlog/read-model';
import { DATABASE } from '@castlog/runtime';
import { Inject, Module } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { GpodderAuthModule } from './auth/gpodder-auth';
import { DeviceFirstUse } from './device-first-use';
import { withdrawControllersUnless } from '../http/optional-face';
import { GpodderDevicesController } from './gpodder-devices.controller';
import { GpodderEpisodesController } from './gpodder-episodes.controller';
import { GpodderSettingsController } from './gpodder-settings.controller';
import { GpodderSubscriptionsController } from './gpodder-subscriptions.controller';
import { SimpleSubscriptionsController } from './simple-subscriptions.controller';

/** The gpodder.net face (CONTRACT.md, "gpodder.net API (v2) on the same log"): devices,
 * subscription and episode-action sync, settings, the simple API, and (GpodderAuthModule)
 * login/logout.
 * Needs AppendService from a global module and what GpodderAuthModule needs.
 *
 * With GPODDER_API off, its routes are absent (withdrawControllersUnless): the router answers 404
 * and /openapi.json does not list them. */
@Module({
  imports: [GpodderAuthModule],
  controllers: [
    GpodderDevicesController,
    GpodderSubscriptionsController,
    GpodderEpisodesController,
    GpodderSettingsController,
    SimpleSubscriptionsController,
  ],
  providers: [
    {
      provide: GpodderQuery,
      inject: [DATABASE, ActiveProjection],
      useFactory: (database: Database, readModel: ActiveProjection) =>
        new GpodderQuery(database.dataSource, readModel),
    },
    DeviceFirstUse,
  ],
})
export class GpodderModule {
  constructor(@Inject(CONFIG) config: Config, @Inject(ModulesContainer) modules: ModulesContainer) {
    withdrawControllersUnless(config.GPODDER_API, modules, [GpodderModule, GpodderAuthModule]);
  }
}
