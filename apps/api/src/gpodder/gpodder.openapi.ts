import { CastlogRoute } from '@castlog/http';
import { applyDecorators } from '@nestjs/common';
import { ApiBadRequestResponse, ApiParam } from '@nestjs/swagger';
import { errorSchema } from '../http/openapi';
import { openApiSchema } from '../http/schema';
import { DEVICE_ID_PARAMETER } from './gpodder.request';

/** A route of the gpodder.net face: its body (if any) is read as text whatever the Content-Type,
 * and input that fails validation answers 400 (gpodder.net's status) with castlog's error body. */
export const GpodderRoute = () =>
  applyDecorators(
    CastlogRoute({ textBody: true, invalidInputStatus: 400 }),
    ApiBadRequestResponse({
      description: 'Input could not be validated (the message says what is wrong)',
      schema: errorSchema(
        '400',
        'Input could not be validated: since must be a non-negative integer (Unix seconds)',
      ),
    }),
  );

export const ApiUserParam = () =>
  ApiParam({
    name: 'user',
    description: 'The authenticated user (any other name answers 401)',
    example: 'alice',
  });

export const ApiDeviceParam = () =>
  ApiParam({
    name: 'device',
    description: 'The device id; a device not used before is created by this request',
    schema: { ...openApiSchema(DEVICE_ID_PARAMETER), example: 'phone' },
  });
