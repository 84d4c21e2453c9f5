import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { FastifyRequest } from 'fastify';

/** The request id: the client's `X-Request-Id` when it sent a sane one, else Fastify's. It travels
 * into the event's headers and the projector's logs. */
export const RequestId = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  const request = context.switchToHttp().getRequest<FastifyRequest>();
  return String(request.id);
});

/** A Host header naming a host (a name, an IPv4 or a bracketed IPv6 address) and an optional port,
 * nothing more. */
const HOST = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** `scheme://host` of this request, for absolute `next`/`previous` links: its Host header, or when
 * it sent none (HTTP/1.0) or one that names more than a host and port, the address it reached. */
export const RequestOrigin = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  const request = context.switchToHttp().getRequest<FastifyRequest>();
  const host = request.headers.host;
  if (typeof host === 'string' && HOST.test(host)) return `${request.protocol}://${host}`;
  const { localAddress, localPort } = request.socket;
  const address = localAddress?.includes(':') ? `[${localAddress}]` : localAddress;
  return `${request.protocol}://${address ?? 'localhost'}:${localPort ?? ''}`;
});
