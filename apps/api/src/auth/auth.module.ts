import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AuthStore } from '@castlog/auth';
import { AuthController } from './auth.controller';
import { CredentialsGuard } from './credentials.guard';
import { RateLimitGuard, RateLimiter } from './rate-limit.guard';
import { TokenCache } from './token-cache';

/** Login and refresh routes, the credentials guard, the token cache and the rate limit. Needs
 * `DataSource` (with the auth migrations run), `DATABASE` and `CONFIG` provided globally. Modules
 * whose controllers use `@Authenticated()` import this module. */
@Module({
  controllers: [AuthController],
  providers: [
    {
      provide: AuthStore,
      useFactory: (dataSource: DataSource) => new AuthStore(dataSource),
      inject: [DataSource],
    },
    RateLimiter,
    TokenCache,
    CredentialsGuard,
    RateLimitGuard,
  ],
  exports: [AuthStore, RateLimiter, TokenCache, CredentialsGuard, RateLimitGuard],
})
export class AuthModule {}
