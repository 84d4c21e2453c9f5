import { Module } from '@nestjs/common';
import { AuthModule } from '../../auth/auth.module';
import { GpodderAuthController } from './gpodder-auth.controller';
import { GpodderAuthGuard, GpodderSessions } from './gpodder-auth.guard';

/** Authentication of the gpodder.net face: the guard behind `GpodderAuthenticated()`, the session
 * store and the login/logout routes. Modules whose controllers use `GpodderAuthenticated()` import
 * this module (it re-exports AuthModule, whose store, token cache and rate limits the guard uses).
 * Needs what AuthModule needs: `DataSource`, `DATABASE` and `CONFIG` provided globally. */
@Module({
  imports: [AuthModule],
  controllers: [GpodderAuthController],
  providers: [GpodderSessions, GpodderAuthGuard],
  exports: [AuthModule, GpodderSessions, GpodderAuthGuard],
})
export class GpodderAuthModule {}

export {
  GPODDER_WWW_AUTHENTICATE,
  GpodderAuthGuard,
  GpodderAuthenticated,
  GpodderSessions,
  GpodderUser,
  gpodderUnauthorized,
} from './gpodder-auth.guard';
export type { GpodderCredential, GpodderIdentity, GpodderReply, GpodderRequest } from './gpodder-auth.guard';
export { SESSION_COOKIE } from '../../http/session-cookie';
