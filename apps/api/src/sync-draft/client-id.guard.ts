import {
  applyDecorators,
  CanActivate,
  createParamDecorator,
  ExecutionContext,
  Injectable,
  UseGuards,
} from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { Authenticated } from '../auth/credentials.guard';
import { ValidationFailed } from '../http/errors';
import { openApiSchema } from '../http/schema';
import { CLIENT_ID, parseClientId } from './sync-draft.request';

interface ClientRequest {
  headers: Record<string, string | string[] | undefined>;
  clientId?: string;
}

/** Reads the `Client-ID` header every `/api/v1` route requires (a UUID version 4, else 400 on the
 * face's routes) and puts it, lower-case, on `request.clientId`. Runs after the credentials: a
 * request without them is 401 whatever its Client-ID. */
@Injectable()
export class ClientIdGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<ClientRequest>();
    request.clientId = parseClientId(request.headers['client-id']);
    return true;
  }
}

/** The request's Client-ID, set by ClientIdGuard. */
export const CurrentClient = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  const { clientId } = context.switchToHttp().getRequest<ClientRequest>();
  if (clientId === undefined) throw new ValidationFailed('the Client-ID header must be a UUID version 4');
  return clientId;
});

/** For a controller of the sync draft's `/api/v1`: credentials and the per-user rate limit (as on
 * /v1), then the Client-ID, with the matching OpenAPI header and answers. */
export const SyncDraftAuthenticated = () =>
  applyDecorators(
    Authenticated(),
    UseGuards(ClientIdGuard),
    ApiHeader({
      name: 'Client-ID',
      required: true,
      description: 'The client installation: a UUID version 4 it generated once and keeps',
      schema: openApiSchema(CLIENT_ID),
    }),
  );
