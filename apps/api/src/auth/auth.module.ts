import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AuthStore } from '@castlog/auth';
import { AuthController } from './auth.controller';
import { CredentialsGuard } from './credentials.guard';
import { RateLimitGuard, RateLimiter } from './rate-limit.guard';

/** Login and refresh routes, the credentials guard and the rate limit. Needs `DataSource` (with
 * the auth migrations run) and `CONFIG` provided globally. Modules whose controllers use
 * `@Authenticated()` import this module. */
@Module({
  controllers: [AuthController],
  providers: [
    {
      provide: AuthStore,
      useFactory: (dataSource: DataSource) => new AuthStore(dataSource),
      inject: [DataSource],
    },
    RateLimiter,
    CredentialsGuard,
    RateLimitGuard,
  ],
  exports: [AuthStore, RateLimiter, CredentialsGuard, RateLimitGuard],
})
export class AuthModule {}
