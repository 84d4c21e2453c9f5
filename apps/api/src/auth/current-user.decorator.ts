import { ExecutionContext, UnauthorizedException, createParamDecorator } from '@nestjs/common';
import type { AuthenticatedRequest } from './credentials.guard';

/** The authenticated user's id, set by CredentialsGuard. A route without the guard answers 401
 * rather than running without a user. */
export const CurrentUser = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  const { userId } = context.switchToHttp().getRequest<AuthenticatedRequest>();
  if (!userId) throw new UnauthorizedException('User not authorized');
  return userId;
});
