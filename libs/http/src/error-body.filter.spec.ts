import { BadRequestException, NotFoundException, UnauthorizedException } from '@nestjs/common';
import { ValidationFailed } from './errors';
import { toErrorResponse } from './error-body.filter';

describe('toErrorResponse', () => {
  it('answers input that fails validation with 405 by default, as the Open Podcast API says', () => {
    expect(toErrorResponse(new ValidationFailed('since must be an integer'), 1)).toMatchObject({
      status: 405,
      body: { code: '405', message: 'Input could not be validated: since must be an integer' },
    });
    expect(toErrorResponse(new BadRequestException(), 1).status).toBe(405);
  });

  it("answers it with the route's own status when the route asks for 400, keeping the message", () => {
    expect(toErrorResponse(new ValidationFailed('since must be an integer'), 1, 400)).toEqual({
      status: 400,
      body: { code: '400', message: 'Input could not be validated: since must be an integer' },
      headers: {},
    });
    expect(toErrorResponse(new BadRequestException(), 1, 400)).toMatchObject({
      status: 400,
      body: { code: '400', message: expect.stringMatching(/^Input could not be validated/) },
    });
    expect(toErrorResponse({ statusCode: 415, code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' }, 1, 400).status).toBe(
      400,
    );
  });

  it('leaves every other status alone on such a route', () => {
    expect(toErrorResponse(new NotFoundException(), 1, 400).status).toBe(404);
    expect(toErrorResponse(new UnauthorizedException(), 1, 400).status).toBe(401);
    expect(toErrorResponse({ statusCode: 413, code: 'FST_ERR_CTP_BODY_TOO_LARGE' }, 1, 400).status).toBe(413);
  });
});
