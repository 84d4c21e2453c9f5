import { UsePipes } from '@nestjs/common';
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';
import { RefuseUndecodableText } from './text-body';

/** What a castlog route asks of the HTTP layer beyond its handler, kept in the Fastify route's
 * `config` under `castlog`. */
export interface CastlogRouteOptions {
  /** The handler receives the request body as text (UTF-8, or as its byte order mark or XML
   * declaration says), whatever the Content-Type says or whether there is one: the route reads the
   * body by its content. A body that is not text is refused as invalid input, after the guards.
   * Only the body limit applies before them. */
  readonly textBody?: boolean;
  /** The handler receives an HTML form's fields (and files), `application/x-www-form-urlencoded`
   * or `multipart/form-data`, as a `FormBody` (see `readFormBodies`); any other body is refused as
   * invalid input. Only the web pages' routes read forms. */
  readonly formBody?: boolean;
  /** The status of input that fails validation on this route: 405 (the Open Podcast API's, the
   * default) or 400 (gpodder.net's). The error body is the same, with this code. */
  readonly invalidInputStatus?: 400 | 405;
  /** The largest body the route reads, in bytes, where its documented maximum needs more than
   * BODY_LIMIT_BYTES (which applies when it is larger). A body over it answers 413. */
  readonly bodyLimit?: number;
}

interface RouteConfigWithOptions {
  readonly castlog?: CastlogRouteOptions;
}

/** A method decorator adding `options` to the route's options (merged with any set before). */
export const CastlogRoute =
  (options: CastlogRouteOptions): MethodDecorator =>
  (target, key, descriptor) => {
    if (options.textBody === true) UsePipes(RefuseUndecodableText)(target, key, descriptor);
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

/** The options a Fastify route config holds (none when it holds none). */
export const optionsOfConfig = (config: unknown): CastlogRouteOptions =>
  (config as RouteConfigWithOptions | undefined)?.castlog ?? {};

/** The route's options, from the Fastify route config of the request (none outside a route). */
export function routeOptionsOf(request: unknown): CastlogRouteOptions {
  return optionsOfConfig(
    (request as { routeOptions?: { config?: unknown } } | undefined)?.routeOptions?.config,
  );
}

/** The invalid-input status for the router's own errors (a path parameter that does not
 * percent-decode, or is too long), which come before any route is found: that of the routes with
 * parameters whose static beginning (up to the first parameter) the request's path starts with, the
 * longest first — the route's own (`invalidInputStatus`), else 405. A path under no such beginning
 * lies under no route: `undefined`, an unknown route. */
export class InvalidInputStatusByPath {
  private readonly prefixes: { readonly prefix: string; readonly status: 400 | 405 }[] = [];

  /** Notes a route as Fastify registers it (an `onRoute` hook). */
  add(route: { readonly url: string; readonly config?: unknown }): void {
    const parameter = route.url.indexOf(':');
    if (parameter < 0) return;
    const status = optionsOfConfig(route.config).invalidInputStatus ?? 405;
    this.prefixes.push({ prefix: route.url.slice(0, parameter), status });
    this.prefixes.sort((a, b) => b.prefix.length - a.prefix.length);
  }

  statusFor(url: string | undefined): 400 | 405 | undefined {
    if (url === undefined) return undefined;
    return this.prefixes.find(({ prefix }) => url.startsWith(prefix))?.status;
  }
}
