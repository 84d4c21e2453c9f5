import { toErrorResponse } from '@castlog/http';
import { ExecutionContext } from '@nestjs/common';
import { TooManyRequests } from '../http/errors';
import { RateLimitGuard, RateLimits } from './rate-limit.guard';

/** Rate limits that answer from a script per key and record what was taken (the buckets
 * themselves are tested against PostgreSQL in libs/auth/src/rate-limit.store.int-spec.ts). */
function scriptedLimits(retryAfterByKey: Record<string, number> = {}) {
  const taken: string[] = [];
  const limits: RateLimits = {
    take: async (key) => {
      taken.push(key);
      return retryAfterByKey[key] ?? 0;
    },
    peek: async (key) => retryAfterByKey[key] ?? 0,
  };
  return { limits, taken };
}

describe('RateLimitGuard', () => {
  const context = (request: object) =>
    ({ switchToHttp: () => ({ getRequest: () => request }) }) as unknown as ExecutionContext;

  it('takes from the bucket of the user, or of the client address on routes without a user', async () => {
    const { limits, taken } = scriptedLimits();
    const guard = new RateLimitGuard(limits);
    expect(await guard.canActivate(context({ userId: 'u1', ip: '10.0.0.1' }))).toBe(true);
    expect(await guard.canActivate(context({ userId: 'u2', ip: '10.0.0.1' }))).toBe(true);
    expect(await guard.canActivate(context({ ip: '10.0.0.1' }))).toBe(true);
    expect(await guard.canActivate(context({}))).toBe(true);
    expect(taken).toEqual(['user:u1', 'user:u2', 'ip:10.0.0.1', 'ip:unknown']);
  });

  it('answers 429 with the error body and Retry-After when the bucket is empty', async () => {
    const guard = new RateLimitGuard(scriptedLimits({ 'user:u1': 59 }).limits);
    const thrown = await guard
      .canActivate(context({ userId: 'u1', ip: '10.0.0.2' }))
      .catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(TooManyRequests);
    expect(toErrorResponse(thrown, 1)).toEqual({
      status: 429,
      body: { code: '429', message: 'Too many requests' },
      headers: { 'retry-after': '59' },
    });
  });

  it('lets an error of the rate limits through instead of allowing the request', async () => {
    const unreachable = new Error('connect ECONNREFUSED 127.0.0.1:5432');
    const guard = new RateLimitGuard({
      take: () => Promise.reject(unreachable),
      peek: () => Promise.reject(unreachable),
    });
    await expect(guard.canActivate(context({ userId: 'u1' }))).rejects.toBe(unreachable);
  });
});
