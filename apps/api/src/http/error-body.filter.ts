import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { ERROR_MESSAGES, errorBody, Unavailable } from './errors';

export const WWW_AUTHENTICATE = 'Bearer realm="castlog", Basic realm="castlog", charset="UTF-8"';

interface FrameworkError {
  statusCode?: number;
  code?: string;
  message?: string;
}

/** Maps any error to the contract's body `{code, message}`; never a stack trace. Statuses the
 * contract does not name (400, 415, 422) mean input that fails validation: 405. */
export function toErrorResponse(
  error: unknown,
  retryAfterSeconds: number,
): { status: number; body: { code: string; message: string }; headers: Record<string, string> } {
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
    if (error instanceof Unavailable) headers['retry-after'] = String(error.retryAfterSeconds);
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
    const { status, body, headers } = toErrorResponse(error, this.retryAfterSeconds);
    if (status >= 500)
      this.logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    for (const [name, value] of Object.entries(headers)) {
      if (!reply.getHeader(name)) void reply.header(name, value);
    }
    void reply.status(status).type('application/json; charset=utf-8').send(body);
  }
}
