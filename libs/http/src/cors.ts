import fastifyCors, { FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/** The gpodder.net face's paths: gpodder.net answers every origin on every endpoint. */
const GPODDER_FACE = /^\/+(?:api\/2|subscriptions)\//;
/** The Open Podcast API's faces: `/v1` and the sync draft's `/api/v1` and `/auth`. */
const OPA_FACES = /^\/+(?:v1|api\/v1|auth)(?:[/?]|$)/;

/** Headers a browser-based client may send and read. */
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Client-ID', 'X-Request-Id'];
const EXPOSED_HEADERS = ['X-Request-Id', 'Retry-After', 'WWW-Authenticate'];
/** How long a browser may keep a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE = 86_400;

const NONE: FastifyCorsOptions = { origin: false };

/** The CORS policy of a request to `url`: every origin on the gpodder.net face (its credentials are
 * in headers, never cookies a browser adds by itself, so no `credentials`), the listed origins on
 * the Open Podcast API's faces, and none elsewhere (health, metrics, documents). */
export function corsPolicyFor(url: string, origins: readonly string[]): FastifyCorsOptions {
  const common = {
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE,
    // An OPTIONS without the preflight's headers is answered too, not refused as plain text.
    strictPreflight: false,
  };
  if (GPODDER_FACE.test(url)) return { ...common, origin: '*', methods: ['GET', 'POST', 'PUT'] };
  if (OPA_FACES.test(url) && origins.length > 0)
    return { ...common, origin: [...origins], methods: ['GET', 'POST', 'PATCH', 'DELETE'] };
  return NONE;
}

/** Answers browsers' CORS preflights and adds the CORS headers by `corsPolicyFor`. */
export async function allowBrowsers(fastify: FastifyInstance, origins: readonly string[]): Promise<void> {
  await fastify.register(fastifyCors, {
    delegator: (request, callback) => callback(null, corsPolicyFor(request.url ?? '/', origins)),
  });
}
