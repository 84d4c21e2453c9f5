import { Config } from '@castlog/config';
import fastifyCookie from '@fastify/cookie';
import { DynamicModule, INestApplication, Type } from '@nestjs/common';
import type { Logger } from 'pino';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { randomUUID } from 'node:crypto';
import { IncomingHttpHeaders, IncomingMessage, validateHeaderName, validateHeaderValue } from 'node:http';
import { limitBodies } from './body-limit';
import { allowBrowsers } from './cors';
import { errorBody, Unavailable, ValidationFailed } from './errors';
import {
  answerClientError,
  answerFrameworkError,
  answerUnmetExpectation,
  ErrorBodyFilter,
} from './error-body.filter';
import { PinoNestLogger } from './nest-logger';
import { RequestMetrics } from './request-metrics';
import { InvalidInputStatusByPath, routeOptionsOf } from './route-options';
import { decodeText, TextEncodingError } from './text';
import { readAsForm, readFormBodies } from './form-body';
import { UndecodableText } from './text-body';

const SANE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The media type a `textBody` route's request is parsed as: its own Content-Type is set aside
 * (see `readTextBodies`). */
const TEXT_BODY_TYPE = 'application/x-castlog-text-body';

/** Describes the served OpenAPI document: title, description, version, security schemes. */
export type OpenApiDocument = (builder: DocumentBuilder) => DocumentBuilder;

export interface HttpAppOptions {
  /** Serves the OpenAPI document (`/docs`, `/openapi.json`) this describes; none without it. */
  readonly openApi?: OpenApiDocument;
  /** Answers browsers' CORS requests, from these origins on the Open Podcast API's faces
   * (`allowBrowsers`); no CORS at all without it. */
  readonly corsOrigins?: readonly string[];
}

/** Builds the Fastify-based Nest application around `module`: body limits, request ids, the error
 * body for every error (including Fastify's own), metrics of every request, and the OpenAPI
 * document when `options.openApi` describes one. */
export async function createHttpApp(
  module: Type | DynamicModule,
  config: Config,
  logger?: Logger,
  options: HttpAppOptions = {},
): Promise<NestFastifyApplication> {
  const routerErrorStatus = new InvalidInputStatusByPath();
  const app = await NestFactory.create<NestFastifyApplication>(
    module,
    fastifyAdapter(config, routerErrorStatus, logger),
    {
      logger: logger ? new PinoNestLogger(logger) : false,
      // Nest's default adds a form-encoded parser; bodies are JSON (Fastify's own parser), so a form
      // is refused as an unsupported media type, 405 like any body that is not JSON.
      bodyParser: false,
    },
  );
  app.useGlobalFilters(new ErrorBodyFilter(config.RETRY_AFTER_SECONDS));
  // Cookies parsed into `request.cookies`, set with `reply.setCookie` (the gpodder.net session).
  await app.register(fastifyCookie);
  if (options.corsOrigins) await allowBrowsers(app.getHttpAdapter().getInstance(), options.corsOrigins);
  const fastify = app.getHttpAdapter().getInstance();
  fastify.server.on('checkExpectation', answerUnmetExpectation);
  refuseBeforeRouting(fastify, config.RETRY_AFTER_SECONDS);
  answerWithinDeadline(fastify, config.REQUEST_TIMEOUT, config.RETRY_AFTER_SECONDS);
  limitBodies(fastify, config.BODY_LIMIT_BYTES, config.REQUEST_TIMEOUT);
  readJsonBodies(fastify);
  readTextBodies(fastify);
  readFormBodies(fastify);
  parseBodiesAsRoutesAsk(fastify);
  fastify.addHook('onRoute', (route) => routerErrorStatus.add(route));
  sendWritableHeaders(fastify);
  const metrics = app.get(RequestMetrics, { strict: false });
  fastify.addHook('onResponse', async (request, reply) => {
    metrics.observeRequest(
      request.method,
      request.routeOptions.url ?? 'unknown',
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
  });
  if (options.openApi) setUpOpenApi(app, options.openApi);
  return app;
}

/** Fastify as castlog runs it: request ids, the server's body limit (`limitBodies` sets each
 * route's), and the error body for what the router and Node's HTTP parser refuse. */
function fastifyAdapter(
  config: Config,
  routerErrorStatus: InvalidInputStatusByPath,
  logger: Logger | undefined,
): FastifyAdapter {
  return new FastifyAdapter({
    ...(logger ? { loggerInstance: logger.child({ context: 'http' }) } : {}),
    bodyLimit: config.BODY_LIMIT_BYTES,
    genReqId: (request: IncomingMessage) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
    },
    // `https://host//api/2/…`: what a client builds from a server address with a trailing slash
    // (Kasts does), and what nginx, by default, would have merged on the way.
    routerOptions: { ignoreDuplicateSlashes: true },
    forceCloseConnections: 'idle',
    // Answered by `refuseBeforeRouting` with the error body and Retry-After instead of Fastify's own.
    return503OnClosing: false,
    // The error body for what the router and Node's HTTP parser refuse, too.
    frameworkErrors: (error: FastifyError, request: { url?: string }, reply: FastifyReply) =>
      answerFrameworkError(
        error,
        reply,
        config.RETRY_AFTER_SECONDS,
        routerErrorStatus.statusFor(request.url),
      ),
    clientErrorHandler: answerClientError,
    // Node would answer an HTTP/1.1 request without Host with a bare 400; `refuseBeforeRouting`
    // answers it.
    http: { requireHostHeader: false },
  });
}

/** What is refused before a route runs: a request that comes while the app drains (on a connection
 * kept alive) is told to come back, and an HTTP/1.1 request without Host is invalid input. */
function refuseBeforeRouting(fastify: FastifyInstance, retryAfterSeconds: number): void {
  let closing = false;
  fastify.addHook('preClose', async () => {
    closing = true;
  });
  fastify.addHook('onRequest', async (request, reply) => {
    if (closing) {
      void reply.header('connection', 'close');
      throw new Unavailable(retryAfterSeconds, 'shutting down');
    }
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined)
      throw new ValidationFailed('the Host header is missing');
    // No DELETE route reads a body, and Fastify would refuse an empty one labelled JSON, as some
    // clients label every request.
    if (request.method === 'DELETE' && !hasBody(request.headers)) delete request.headers['content-type'];
  });
}

/** A request still unanswered after `timeoutMs` answers 503 with Retry-After: a dependency that
 * stops answering on a connection already open (a paused PostgreSQL, a network that drops packets
 * without a reset) would otherwise hold it, guards included, until the peer came back. What the
 * request started goes on: a write it appended applies as after any 503, so the message says a
 * write may still apply; its late answer is dropped, logged as one line instead of Fastify's
 * warning with a stack. */
function answerWithinDeadline(fastify: FastifyInstance, timeoutMs: number, retryAfterSeconds: number): void {
  const deadlines = new WeakMap<object, NodeJS.Timeout>();
  fastify.addHook('onRequest', async (request, reply) => {
    const deadline = setTimeout(() => {
      // Not `request.raw.destroyed`: Node sets it once a body has been read in full.
      if (reply.sent || reply.raw.writableEnded || request.raw.socket?.destroyed === true) return;
      request.log.warn({ timeoutMs }, 'request unanswered in time: 503');
      // The connection closes after the answer: the request may still be sending its body.
      void reply
        .code(503)
        .header('retry-after', String(retryAfterSeconds))
        .header('connection', 'close')
        .send(
          errorBody(
            503,
            `no answer within ${timeoutMs} ms${READS.has(request.method) ? '' : '; a write may still apply'}`,
          ),
        );
      reply.log = lateAnswerLog(request.log, timeoutMs);
    }, timeoutMs);
    deadline.unref();
    deadlines.set(request, deadline);
  });
  // Once an answer is on its way it is the answer, however long its sending takes (a 413 waits
  // for the refused body to be read).
  fastify.addHook('onSend', async (request) => {
    clearTimeout(deadlines.get(request));
  });
  fastify.addHook('onResponse', async (request) => {
    clearTimeout(deadlines.get(request));
  });
  fastify.addHook('onRequestAbort', async (request) => {
    clearTimeout(deadlines.get(request));
  });
}

/** Every answer carries its request id. A header Node cannot write (a CR LF, or a character past
 * Latin-1, in a value built from input) would fail inside sending, where Fastify's fallback leaves
 * the request unanswered: such headers are dropped and the answer becomes a 500. */
function sendWritableHeaders(fastify: FastifyInstance): void {
  fastify.addHook('onSend', async (request, reply, payload) => {
    void reply.header('x-request-id', request.id);
    const unwritable = Object.entries(reply.getHeaders())
      .filter(([name, value]) => !isWritableHeader(name, value))
      .map(([name]) => name);
    if (unwritable.length === 0) return payload;
    request.log.error({ headers: unwritable }, 'an answer carried headers Node cannot write: 500');
    for (const name of [...unwritable, 'content-length']) reply.removeHeader(name);
    void reply.code(500).header('content-type', 'application/json; charset=utf-8');
    return JSON.stringify(errorBody(500));
  });
}

function isWritableHeader(name: string, value: unknown): boolean {
  try {
    validateHeaderName(name);
    for (const item of [value].flat()) validateHeaderValue(name, String(item));
    return true;
  } catch {
    return false;
  }
}

/** Methods that change nothing: their deadline answer says nothing of a write. */
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** `log`, but Fastify's warning for the answer a handler sends after the deadline answered (an
 * error with a stack that asks whether `return reply` was forgotten) is one line at info. */
function lateAnswerLog(log: FastifyBaseLogger, timeoutMs: number): FastifyBaseLogger {
  const late = Object.create(log) as FastifyBaseLogger;
  late.warn = ((entry: unknown, ...rest: unknown[]) => {
    const code = (entry as { err?: { code?: unknown } } | null)?.err?.code;
    if (code === 'FST_ERR_REP_ALREADY_SENT')
      log.info({ timeoutMs }, 'late answer dropped: the request was answered 503 at its deadline');
    else (log.warn as (...args: unknown[]) => void)(entry, ...rest);
  }) as FastifyBaseLogger['warn'];
  return late;
}

const hasBody = (headers: IncomingHttpHeaders): boolean =>
  headers['transfer-encoding'] !== undefined ||
  (headers['content-length'] !== undefined && headers['content-length'] !== '0');

/** Routes with the `textBody` option (CastlogRoute) get their body as text (`decodeText`; else an
 * `UndecodableText`, refused after the credentials) whatever the request's Content-Type, including
 * none, a malformed one, or JSON that does not parse: gpodder.net clients label bodies loosely
 * (mygpoclient sends JSON as application/x-www-form-urlencoded, AntennaPod text as `plain/text`, an
 * empty body as JSON). Their Content-Type becomes TEXT_BODY_TYPE (`parseBodiesAsRoutesAsk`); every
 * other route keeps Fastify's and Nest's parsing (and its refusals) unchanged. The body limit
 * applies as everywhere. */
function readTextBodies(fastify: FastifyInstance): void {
  fastify.addContentTypeParser(TEXT_BODY_TYPE, { parseAs: 'buffer' }, (_request, body, done) => {
    try {
      done(null, decodeText(body as Buffer));
    } catch (error) {
      if (error instanceof TextEncodingError) done(null, new UndecodableText(error.message));
      else done(error as Error);
    }
  });
}

/** A route that asks for its body as text (`textBody`) or as a form (`formBody`) gets it through
 * that parser whatever its Content-Type says, by the type being replaced before Fastify picks a
 * parser; every other route keeps Fastify's choice. */
function parseBodiesAsRoutesAsk(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', async (request) => {
    const options = routeOptionsOf(request);
    if (options.formBody === true) readAsForm(request);
    // OPTIONS too: no route reads its body, and a JSON one that does not parse would otherwise fail
    // in the CORS plugin's own route, outside the error body.
    else if (options.textBody === true || request.method === 'OPTIONS')
      request.headers['content-type'] = TEXT_BODY_TYPE;
  });
}

/** JSON bodies are read as UTF-8 (or UTF-16 with its byte order mark) and refused when they are not
 * (405), where Fastify's own parser would put U+FFFD in place of every invalid byte and so change
 * the URLs in them; the rest is Fastify's own JSON parsing, with its refusals. */
function readJsonBodies(fastify: FastifyInstance): void {
  // `constructor.prototype` is data like any other once parsed (nothing merges bodies into objects);
  // `__proto__` is refused with its own message.
  const parseJson = fastify.getDefaultJsonParser('error', 'ignore');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      text = decodeText(body as Buffer);
    } catch (error) {
      return done(
        error instanceof TextEncodingError ? new ValidationFailed(error.message) : (error as Error),
      );
    }
    parseJson(request, text, (error, value) => {
      if ((error as { code?: unknown } | null)?.code === 'FST_ERR_CTP_INVALID_JSON_BODY' && isJson(text))
        return done(new ValidationFailed(PROTO_KEY_REFUSED));
      done(error, value);
    });
  });
}

/** What a JSON body holding a `__proto__` key is told (Fastify's parser calls it invalid JSON). */
export const PROTO_KEY_REFUSED = 'the body must not hold a __proto__ key';

const isJson = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** Serves the document of `app`'s routes at `/docs` (Swagger UI) and `/openapi.json`. */
export function setUpOpenApi(app: INestApplication, describe: OpenApiDocument): void {
  const document = SwaggerModule.createDocument(app, describe(new DocumentBuilder()).build());
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'openapi.json', raw: ['json'] });
}
