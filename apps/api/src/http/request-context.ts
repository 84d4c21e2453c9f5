import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { FastifyRequest } from 'fastify';

/** The request id: the client's `X-Request-Id` when it sent a sane one, else Fastify's. It travels
 * into the event's headers and the projector's logs. */
export const RequestId = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  const request = context.switchToHttp().getRequest<FastifyRequest>();
  return String(request.id);
});

/** `scheme://host` of this request, for absolute `next`/`previous` links. */
export const BaseUrl = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  const request = context.switchToHttp().getRequest<FastifyRequest>();
  return `${request.protocol}://${request.host ?? request.hostname}`;
});
