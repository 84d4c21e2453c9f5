import { CONFIG, Config } from '@castlog/config';
import { AccountQuery, ActiveProjection, Database, GpodderQuery } from '@castlog/read-model';
import { DATABASE } from '@castlog/runtime';
import { Inject, Module } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { AuthModule } from '../auth/auth.module';
import { withdrawControllersUnless } from '../http/optional-face';
import { AccountPage } from './account.page';
import { AdminPage } from './admin.page';
import { AppPasswordsPage } from './app-passwords.page';
import { DevicesPage } from './devices.page';
import { HistoryPage } from './history.page';
import { OpmlPage } from './opml.page';
import { FeedTitles } from './feed-titles';
import { Pages } from './pages';
import { SignInPage } from './sign-in.page';
import { SubscriptionsPage } from './subscriptions.page';
import { WebErrorFilter } from './web-error.filter';
import { AdminGuard, WebSessionGuard } from './web-session';

/** The web pages (`/web/…`): server-rendered HTML for people, working without JavaScript, through
 * the same requests as the APIs (AppendService from a global module). With WEB_UI off their routes
 * are absent (404). */
@Module({
  imports: [AuthModule],
  controllers: [
    SignInPage,
    SubscriptionsPage,
    DevicesPage,
    HistoryPage,
    OpmlPage,
    AppPasswordsPage,
    AccountPage,
    AdminPage,
  ],
  providers: [
    Pages,
    FeedTitles,
    WebErrorFilter,
    WebSessionGuard,
    AdminGuard,
    {
      provide: GpodderQuery,
      inject: [DATABASE, ActiveProjection],
      useFactory: (database: Database, readModel: ActiveProjection) =>
        new GpodderQuery(database.dataSource, readModel),
    },
    {
      provide: AccountQuery,
      inject: [DATABASE, ActiveProjection],
      useFactory: (database: Database, readModel: ActiveProjection) =>
        new AccountQuery(database.dataSource, readModel),
    },
  ],
})
export class WebModule {
  constructor(@Inject(CONFIG) config: Config, @Inject(ModulesContainer) modules: ModulesContainer) {
    withdrawControllersUnless(config.WEB_UI, modules, [WebModule]);
  }
}
