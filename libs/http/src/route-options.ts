import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';

/** What a castlog route asks of the HTTP layer beyond its handler, kept in the Fastify route's
 * `config` under `castlog`. */
export interface CastlogRouteOptions {
  /** The handler receives the request body as text (UTF-8), whatever the Content-Type says or
   * whether there is one: the route reads the body by its content. Only the body limit applies. */
  readonly textBody?: boolean;
  /** The status of input that fails validation on this route: 405 (the Open Podcast API's, the
   * default) or 400 (gpodder.net's). The error body is the same, with this code. */
  readonly invalidInputStatus?: 400 | 405;
}

interface RouteConfigWithOptions {
  readonly castlog?: CastlogRouteOptions;
}

/** A method decorator adding `options` to the route's options (merged with any set before). */
export const CastlogRoute =
  (options: CastlogRouteOptions): MethodDecorator =>
  (_target, _key, descriptor) => {
    const handler = descriptor.value as object;
    const config = (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) ??
      {}) as RouteConfigWithOptions;
    Reflect.defineMetadata(
      FASTIFY_ROUTE_CONFIG_METADATA,
      { ...config, castlog: { ...config.castlog, ...options } },
      handler,
    );
    return descriptor;
  };

/** The route's options, from the Fastify route config of the request (none outside a route). */
export function routeOptionsOf(request: unknown): CastlogRouteOptions {
  const config = (request as { routeOptions?: { config?: RouteConfigWithOptions } } | undefined)?.routeOptions
    ?.config;
  return config?.castlog ?? {};
}
