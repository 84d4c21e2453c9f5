import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { optionsOfConfig } from './route-options';

/** The most of a refused body read and thrown away so that its client reads the 413: a client that
 * is still sending when the server closes the connection sees a broken pipe, not the answer. */
export const DISCARD_MAX_BYTES = 16 * 1024 * 1024;

/** Each route's body limit: its own (`CastlogRoute({ bodyLimit })`) where it is above `defaultLimit`
 * (BODY_LIMIT_BYTES), else `defaultLimit`. A body over it answers 413 once the body has been read
 * and discarded, up to DISCARD_MAX_BYTES more and within `discardMs`, and the answer is logged with
 * its reason. Past that bound the connection is closed after the answer, as it would be anyway. */
export function limitBodies(fastify: FastifyInstance, defaultLimit: number, discardMs: number): void {
  fastify.addHook('onRoute', (route) => {
    const own = optionsOfConfig(route.config).bodyLimit;
    if (own !== undefined && own > defaultLimit) route.bodyLimit = own;
  });
  fastify.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode !== 413) return payload;
    const discarded = await discardBody(request.raw, DISCARD_MAX_BYTES, discardMs);
    request.log.warn(
      {
        limit: limitOf(request, defaultLimit),
        contentLength: request.headers['content-length'],
        ...discarded,
      },
      tooLargeMessage(limitOf(request, defaultLimit), discarded),
    );
    return payload;
  });
}

const limitOf = (request: FastifyRequest, defaultLimit: number): number =>
  request.routeOptions.bodyLimit ?? defaultLimit;

interface Discarded {
  /** The bytes of the body read and thrown away after the refusal. */
  readonly discardedBytes: number;
  /** Whether the body was read to its end (else the connection closes after the answer). */
  readonly bodyRead: boolean;
}

function tooLargeMessage(limit: number, { discardedBytes, bodyRead }: Discarded): string {
  const after = bodyRead
    ? `the rest of it (${discardedBytes} bytes) read and discarded before answering`
    : `the connection closed after discarding ${discardedBytes} bytes, the most it reads of a refused body`;
  return `answered 413: the request body is larger than this route's limit of ${limit} bytes; ${after}`;
}

/** Reads what is left of `body` and throws it away: resolves once it ends, or once `maxBytes` have
 * been read or `maxMs` have passed (then `bodyRead` is false). */
export function discardBody(body: IncomingMessage, maxBytes: number, maxMs: number): Promise<Discarded> {
  if (body.complete || body.readableEnded || body.destroyed)
    return Promise.resolve({ discardedBytes: 0, bodyRead: body.complete });
  return new Promise((resolve) => {
    let discardedBytes = 0;
    const finish = (bodyRead: boolean) => {
      clearTimeout(timer);
      body.off('data', onData).off('end', onEnd).off('close', onClose).off('error', onClose);
      resolve({ discardedBytes, bodyRead });
    };
    const onData = (chunk: Buffer) => {
      discardedBytes += chunk.length;
      if (discardedBytes > maxBytes) finish(false);
    };
    const onEnd = () => finish(true);
    const onClose = () => finish(body.complete);
    const timer = setTimeout(() => finish(false), maxMs);
    body.on('data', onData).on('end', onEnd).on('close', onClose).on('error', onClose);
    body.resume();
  });
}
