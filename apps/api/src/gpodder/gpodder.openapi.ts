import { UPLOAD_BODY_LIMIT_BYTES } from '@castlog/config';
import { CastlogRoute } from '@castlog/http';
import { applyDecorators } from '@nestjs/common';
import { ApiBadRequestResponse, ApiParam } from '@nestjs/swagger';
import { errorSchema } from '../http/openapi';
import { openApiSchema } from '../http/schema';
import { DEVICE_ID_PARAMETER } from './gpodder.request';

/** gpodder.net's status for input that fails validation, in the OpenAPI document. */
const GpodderValidationResponse = () =>
  applyDecorators(
    ApiBadRequestResponse({
      description: 'Input could not be validated (the message says what is wrong)',
      schema: errorSchema(
        '400',
        'Input could not be validated: since must be a non-negative integer (Unix seconds)',
      ),
    }),
  );

/** A route of the gpodder.net face: its body (if any) is read as text whatever the Content-Type,
 * and input that fails validation answers 400 (gpodder.net's status) with castlog's error body. */
export const GpodderRoute = () =>
  applyDecorators(CastlogRoute({ textBody: true, invalidInputStatus: 400 }), GpodderValidationResponse());

/** A gpodder.net route that takes an upload of up to 10,000 episode actions or URLs: its body limit
 * is UPLOAD_BODY_LIMIT_BYTES (10,000 actions as mygpoclient sends them take about 2.2 MB). */
export const GpodderUploadRoute = () =>
  applyDecorators(
    CastlogRoute({ textBody: true, invalidInputStatus: 400, bodyLimit: UPLOAD_BODY_LIMIT_BYTES }),
    GpodderValidationResponse(),
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
