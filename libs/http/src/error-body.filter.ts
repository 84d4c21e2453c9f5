import { isUnavailableError, messageOf } from '@castlog/supervision';
import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { FastifyError, FastifyReply } from 'fastify';
import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse, STATUS_CODES } from 'node:http';
import { Duplex } from 'node:stream';
import {
  ERROR_MESSAGES,
  errorBody,
  NotFound,
  TooManyRequests,
  Unavailable,
  ValidationFailed,
} from './errors';
import { routeOptionsOf } from './route-options';

export const WWW_AUTHENTICATE = 'Bearer realm="castlog", Basic realm="castlog", charset="UTF-8"';

interface FrameworkError {
  statusCode?: number;
  code?: string;
  message?: string;
}

/** Maps any error to the contract's body `{code, message}`; never a stack trace. Statuses the
 * contract does not name (400, 415, 422) mean input that fails validation: 405, or
 * `invalidInputStatus` where the route asks for another (gpodder.net's 400). A dependency out of
 * reach (PostgreSQL or Kafka refused or dropped the connection) is 503 with Retry-After. */
export function toErrorResponse(
  error: unknown,
  retryAfterSeconds: number,
  invalidInputStatus: 400 | 405 = 405,
): { status: number; body: { code: string; message: string }; headers: Record<string, string> } {
  if (!(error instanceof HttpException) && isUnavailableError(error))
    return toErrorResponse(
      new Unavailable(retryAfterSeconds, 'a dependency is out of reach'),
      retryAfterSeconds,
    );
  const headers: Record<string, string> = {};
  let status = 500;
  let body = errorBody(500);
  if (error instanceof HttpException) {
    status = error.getStatus();
    const response = error.getResponse();
    body =
      typeof response === 'object' && response !== null && 'code' in response && 'message' in response
        ? { code: String(response.code), message: String(response.message) }
        : errorBody(status);
    if (error instanceof Unavailable || error instanceof TooManyRequests)
      headers['retry-after'] = String(error.retryAfterSeconds);
  } else {
    const framework = error as FrameworkError;
    if (typeof framework?.statusCode === 'number') {
      status = framework.statusCode;
      body = errorBody(
        status,
        framework.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ? 'malformed JSON' : undefined,
      );
    }
  }
  if ([400, 415, 422].includes(status)) {
    status = 405;
    body = body.code === '405' ? body : errorBody(405, (error as FrameworkError)?.message);
  }
  if (!ERROR_MESSAGES[status] && status >= 400 && status < 500) {
    status = 405;
    body = errorBody(405);
  }
  if (status === 405 && invalidInputStatus !== 405) {
    status = invalidInputStatus;
    body = { code: String(status), message: body.message };
  }
  if (status === 401) headers['www-authenticate'] = WWW_AUTHENTICATE;
  if ((status === 503 || status === 429) && !headers['retry-after'])
    headers['retry-after'] = String(retryAfterSeconds);
  return { status, body, headers };
}

@Catch()
export class ErrorBodyFilter implements ExceptionFilter {
  private readonly logger = new Logger('HTTP');

  constructor(private readonly retryAfterSeconds: number) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const answer = toErrorResponse(
      error,
      this.retryAfterSeconds,
      routeOptionsOf(reply.request).invalidInputStatus,
    );
    // Fastify parses a body (and may refuse it, or its content type) before it finds that no route
    // takes the request: such a request is still an unknown route's. So is one whose route matched
    // with an empty parameter (`/v1/subscriptions/`), which Nest hands to the not-found handler once
    // the body is read. (The not-found route asks for no invalid-input status of its own, so its
    // refusals come out as 405.)
    const unknownRoute = reply.request.is404 || hasEmptyParameter(reply.request.params);
    const { status, body, headers } =
      unknownRoute && (answer.status === 405 || answer.status === 400)
        ? toErrorResponse(new NotFound(), this.retryAfterSeconds)
        : answer;
    logErrorAnswer(reply, status, error, body, this.logger);
    for (const [name, value] of Object.entries(headers)) {
      if (!reply.getHeader(name)) void reply.header(name, value);
    }
    void reply.status(status).type('application/json; charset=utf-8').send(body);
  }
}

/** The log line of an error answer: a 503 is an outage the client retries through, said once per
 * request on one line with the request's id (the request's own logger carries it); any other 5xx
 * with its stack. Below 500, nothing. */
export function logErrorAnswer(
  reply: FastifyReply,
  status: number,
  error: unknown,
  body: { message: string },
  logger: Logger,
): void {
  if (status === 503)
    reply.request.log.warn(
      `answered 503: ${error instanceof HttpException ? body.message : messageOf(error)}`,
    );
  else if (status >= 500)
    logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
}

const hasEmptyParameter = (params: unknown): boolean =>
  typeof params === 'object' &&
  params !== null &&
  Object.entries(params).some(([name, value]) => value === '' && name !== '*');

/** Fastify's `frameworkErrors`: the router's own errors, answered before any route or filter runs —
 * a path parameter longer than `maxParamLength` (Fastify's 414) or one that does not percent-decode
 * (400). A path guid or deletion id that is not one is a validation failure: 405, error body (or
 * `invalidInputStatus`, that of the routes the path belongs to). A path that does not decode under
 * no route (`invalidInputStatus` undefined) is an unknown route's: 404. */
export function answerFrameworkError(
  error: FastifyError,
  reply: FastifyReply,
  retryAfterSeconds: number,
  invalidInputStatus: 400 | 405 | undefined,
): void {
  const detail =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? 'a path parameter is too long'
      : error.code === 'FST_ERR_BAD_URL'
        ? 'the path is not a valid URL'
        : undefined;
  const refusal =
    error.code === 'FST_ERR_BAD_URL' && invalidInputStatus === undefined
      ? new NotFound()
      : detail
        ? new ValidationFailed(detail)
        : error;
  const { status, body, headers } = toErrorResponse(refusal, retryAfterSeconds, invalidInputStatus);
  // No route runs, so neither does the onSend hook that sets the request id.
  void reply
    .status(status)
    .headers({ ...headers, 'x-request-id': String(reply.request.id) })
    .type('application/json; charset=utf-8')
    .send(body);
}

/** Fastify's `clientErrorHandler`: Node's HTTP parser refused the request before Fastify saw it (a bad
 * request line, bytes not allowed in a header, broken framing, headers over the size limit, headers
 * too slow). Fastify's default answers its own body; this answers the error body, as a validation
 * failure (405), then closes the connection as Node does. */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const detail =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? 'the request headers are too large'
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? 'the request headers did not arrive in time'
          : 'malformed HTTP request';
    const { status, body } = toErrorResponse(new ValidationFailed(detail), 1);
    const text = JSON.stringify(body);
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(text)}\r\nX-Request-Id: ${randomUUID()}\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy(error);
}

/** The server's 'checkExpectation' listener: without one, Node answers an `Expect` other than
 * `100-continue` with a bare 417 before Fastify sees the request. An expectation castlog cannot
 * meet is input it cannot accept: 405 with the error body. */
export function answerUnmetExpectation(_request: IncomingMessage, response: ServerResponse): void {
  const { status, body } = toErrorResponse(new ValidationFailed('unsupported Expect header'), 1);
  const text = JSON.stringify(body);
  response
    .writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      'x-request-id': randomUUID(),
      connection: 'close',
    })
    .end(text);
}
