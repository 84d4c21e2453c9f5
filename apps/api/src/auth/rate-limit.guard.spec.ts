import { ExecutionContext, HttpException } from '@nestjs/common';
import { RateLimitGuard, RateLimiter } from './rate-limit.guard';

describe('RateLimiter', () => {
  it('allows the limit at once, then answers the seconds until the next request', () => {
    const limiter = new RateLimiter({ RATE_LIMIT_PER_MINUTE: 3 });
    expect([0, 1, 2].map(() => limiter.take('a', 1000))).toEqual([0, 0, 0]);
    expect(limiter.take('a', 1000)).toBe(20);
    expect(limiter.take('a', 1000 + 19_000)).toBe(1);
    expect(limiter.take('a', 1000 + 20_000)).toBe(0);
    expect(limiter.take('a', 1000 + 20_000)).toBe(20);
  });

  it('keeps one bucket per key', () => {
    const limiter = new RateLimiter({ RATE_LIMIT_PER_MINUTE: 1 });
    expect(limiter.take('a', 0)).toBe(0);
    expect(limiter.take('a', 0)).toBe(60);
    expect(limiter.take('b', 0)).toBe(0);
  });

  it('refills up to the limit, never beyond', () => {
    const limiter = new RateLimiter({ RATE_LIMIT_PER_MINUTE: 2 });
    limiter.take('a', 0);
    const later = 10 * 60_000;
    expect([limiter.take('a', later), limiter.take('a', later), limiter.take('a', later)]).toEqual([
      0, 0, 30,
    ]);
  });

  it('peeks without taking', () => {
    const limiter = new RateLimiter({ RATE_LIMIT_PER_MINUTE: 2 });
    expect(limiter.peek('a', 0)).toBe(0);
    expect(limiter.take('a', 0)).toBe(0);
    expect(limiter.peek('a', 0)).toBe(0);
    expect(limiter.take('a', 0)).toBe(0);
    expect(limiter.peek('a', 0)).toBe(30);
    expect(limiter.peek('a', 0)).toBe(30);
    expect(limiter.peek('a', 30_000)).toBe(0);
    expect(limiter.take('a', 30_000)).toBe(0);
  });

  it('is disabled by 0', () => {
    const limiter = new RateLimiter({ RATE_LIMIT_PER_MINUTE: 0 });
    for (let i = 0; i < 1000; i += 1) expect(limiter.take('a', 0)).toBe(0);
    expect(limiter.size).toBe(0);
  });

  it('forgets buckets that have refilled', () => {
    const limiter = new RateLimiter({ RATE_LIMIT_PER_MINUTE: 60 });
    limiter.take('a', 60_000);
    limiter.take('b', 60_000);
    expect(limiter.size).toBe(2);
    limiter.take('c', 125_000);
    expect(limiter.size).toBe(1);
  });
});

describe('RateLimitGuard', () => {
  const context = (request: object, headers: Record<string, string>) =>
    ({
      switchToHttp: () => ({
        getRequest: () => request,
        getResponse: () => ({ header: (name: string, value: string) => (headers[name] = value) }),
      }),
    }) as unknown as ExecutionContext;

  it('limits per user, then per address, and answers 429 with Retry-After', () => {
    const guard = new RateLimitGuard(new RateLimiter({ RATE_LIMIT_PER_MINUTE: 1 }));
    const headers: Record<string, string> = {};
    expect(guard.canActivate(context({ userId: 'u1', ip: '10.0.0.1' }, headers))).toBe(true);
    expect(guard.canActivate(context({ userId: 'u2', ip: '10.0.0.1' }, headers))).toBe(true);
    expect(guard.canActivate(context({ ip: '10.0.0.1' }, headers))).toBe(true);

    let thrown: unknown;
    try {
      guard.canActivate(context({ userId: 'u1', ip: '10.0.0.2' }, headers));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(HttpException);
    expect((thrown as HttpException).getStatus()).toBe(429);
    expect((thrown as HttpException).getResponse()).toEqual({ code: '429', message: 'Too many requests' });
    expect(Number(headers['Retry-After'])).toBeGreaterThanOrEqual(59);
  });
});
