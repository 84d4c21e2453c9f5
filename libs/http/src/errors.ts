import { HttpException, HttpStatus } from '@nestjs/common';

/** The contract's messages, by status. */
export const ERROR_MESSAGES: Readonly<Record<number, string>> = {
  401: 'User not authorized',
  403: 'Forbidden',
  404: 'Resource not found',
  405: 'Input could not be validated',
  410: 'Subscription has been deleted',
  413: 'Request body too large',
  429: 'Too many requests',
  500: 'Internal server error',
  503: 'Service unavailable, retry later',
};

export interface ErrorBody {
  readonly code: string;
  readonly message: string;
}

export const errorBody = (status: number, detail?: string): ErrorBody => ({
  code: String(status),
  message: detail ? `${ERROR_MESSAGES[status] ?? 'Error'}: ${detail}` : (ERROR_MESSAGES[status] ?? 'Error'),
});

/** 405: the spec's status for input that fails validation. */
export class ValidationFailed extends HttpException {
  constructor(detail?: string) {
    super(errorBody(405, detail), 405);
  }
}

/** 403: a web page's form posted without its CSRF token, or a page only administrators see. */
export class Forbidden extends HttpException {
  constructor(detail?: string) {
    super(errorBody(403, detail), HttpStatus.FORBIDDEN);
  }
}

export class NotFound extends HttpException {
  constructor() {
    super(errorBody(404), HttpStatus.NOT_FOUND);
  }
}

export class Gone extends HttpException {
  constructor() {
    super(errorBody(410), HttpStatus.GONE);
  }
}

/** 429 with Retry-After: the client's bucket, or its address's allowance of failed credentials, is
 * empty for `retryAfterSeconds`. */
export class TooManyRequests extends HttpException {
  constructor(readonly retryAfterSeconds: number) {
    super(errorBody(429), HttpStatus.TOO_MANY_REQUESTS);
  }
}

/** 503 with Retry-After: the log or the read model is out of reach, or the projection did not
 * catch up in time. A write already appended still applies later. */
export class Unavailable extends HttpException {
  constructor(
    readonly retryAfterSeconds: number,
    detail?: string,
  ) {
    super(errorBody(503, detail), HttpStatus.SERVICE_UNAVAILABLE);
  }
}
