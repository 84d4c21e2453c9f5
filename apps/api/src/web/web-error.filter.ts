import { CONFIG, Config } from '@castlog/config';
import { logErrorAnswer, toErrorResponse } from '@castlog/http';
import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  Inject,
  Injectable,
  Logger,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Pages, seeOther } from './pages';
import { SignInRequired } from './web-session';

/** The pages' errors as pages: a visitor not signed in goes to the sign-in page (and comes back
 * after it); anything else is the error page with the status and message the APIs would answer
 * (invalid input 400, Retry-After on 429 and 503), never a stack trace. */
@Catch()
@Injectable()
export class WebErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Web');

  constructor(
    private readonly pages: Pages,
    @Inject(CONFIG) private readonly config: Pick<Config, 'RETRY_AFTER_SECONDS'>,
  ) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    if (error instanceof SignInRequired) {
      const back = isLocalPath(error.returnTo) ? `?next=${encodeURIComponent(error.returnTo)}` : '';
      seeOther(reply, `/web/sign-in${back}`);
      return;
    }
    const { status, body, headers } = toErrorResponse(error, this.config.RETRY_AFTER_SECONDS, 400);
    logErrorAnswer(reply, status, error, body, this.logger);
    for (const [name, value] of Object.entries(headers))
      if (name !== 'www-authenticate') void reply.header(name, value);
    const title =
      status === 503 ? 'Try again in a moment' : error instanceof HttpException ? 'Not done' : 'Error';
    this.pages.send(reply, 'error', { title }, { status, message: body.message }, status);
  }
}

/** A path on this site under /web (never `//host`, which a browser reads as another site), in
 * printable ASCII only, as a Location header must be. */
export const isLocalPath = (path: string): boolean =>
  /^\/web(\/[^/\\]|\/?$|\?)/.test(path) && /^[\x21-\x7e]*$/.test(path);
