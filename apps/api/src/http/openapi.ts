import { applyDecorators } from '@nestjs/common';
import { ApiPayloadTooLargeResponse, ApiResponse, ApiServiceUnavailableResponse } from '@nestjs/swagger';

/** OpenAPI schema of the error body `{"code","message"}` with an example. */
export const errorSchema = (code: string, message: string) => ({
  type: 'object' as const,
  required: ['code', 'message'],
  properties: {
    code: { type: 'string' as const, example: code },
    message: { type: 'string' as const, example: message },
  },
});

export const ApiValidationFailedResponse = () =>
  ApiResponse({
    status: 405,
    description: 'Input could not be validated',
    schema: errorSchema('405', 'Input could not be validated: per_page must be an integer >= 1'),
  });

/** The 503 any authenticated route can answer: credentials are checked against PostgreSQL. */
export const ApiOutageResponse = () =>
  ApiServiceUnavailableResponse({
    description: 'PostgreSQL or the event log is out of reach, or no answer in time (Retry-After)',
    schema: errorSchema('503', 'Service unavailable, retry later'),
  });

/** Answers every write can give besides its own: the body limit and the event log or projection
 * being out of reach (Retry-After). */
export const ApiWriteErrors = (withBody: boolean) =>
  applyDecorators(
    ...(withBody
      ? [
          ApiPayloadTooLargeResponse({
            description:
              "Body over the route's limit: BODY_LIMIT_BYTES (1 MiB by default), 4 MiB on gpodder.net's uploads",
            schema: errorSchema('413', 'Request body too large'),
          }),
        ]
      : []),
    ApiServiceUnavailableResponse({
      description:
        'The event log or read model is out of reach, or the projection did not catch up in time (Retry-After)',
      schema: errorSchema('503', 'Service unavailable, retry later'),
    }),
  );
