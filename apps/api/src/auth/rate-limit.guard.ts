import { CanActivate, ExecutionContext, HttpException, Inject, Injectable } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { CONFIG, type Config } from '@castlog/config';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

const MINUTE_MS = 60_000;

/** In-memory token buckets, one per key: `RATE_LIMIT_PER_MINUTE` requests at once, refilled at that
 * rate per minute. 0 disables the limit. One instance per process (AuthModule provides it), shared
 * by every guard instance. */
@Injectable()
export class RateLimiter {
  private readonly capacity: number;
  private readonly refillPerMs: number;
  private readonly buckets = new Map<string, Bucket>();
  private lastSweep = 0;

  constructor(@Inject(CONFIG) config: Pick<Config, 'RATE_LIMIT_PER_MINUTE'>) {
    this.capacity = config.RATE_LIMIT_PER_MINUTE;
    this.refillPerMs = this.capacity / MINUTE_MS;
  }

  /** Takes one request from the key's bucket. Answers 0 when allowed, otherwise the whole seconds
   * until the next request would be (at least 1). `nowMs` is a monotonic clock. */
  take(key: string, nowMs: number = performance.now()): number {
    if (this.capacity === 0) return 0;
    this.sweep(nowMs);
    const bucket = this.buckets.get(key) ?? { tokens: this.capacity, updatedAt: nowMs };
    bucket.tokens = this.tokensAt(bucket, nowMs);
    bucket.updatedAt = nowMs;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return this.secondsUntilOne(bucket.tokens);
  }

  /** Like `take`, without taking: 0 when the key's bucket holds a request, otherwise the whole
   * seconds until it will. */
  peek(key: string, nowMs: number = performance.now()): number {
    if (this.capacity === 0) return 0;
    const bucket = this.buckets.get(key);
    if (!bucket) return 0;
    const tokens = this.tokensAt(bucket, nowMs);
    return tokens >= 1 ? 0 : this.secondsUntilOne(tokens);
  }

  /** The bucket's tokens at `nowMs`, refilled since its last update, at most `capacity`. */
  private tokensAt(bucket: Bucket, nowMs: number): number {
    return Math.min(this.capacity, bucket.tokens + (nowMs - bucket.updatedAt) * this.refillPerMs);
  }

  /** Whole seconds (at least 1) until a bucket holding `tokens` (< 1) holds one. */
  private secondsUntilOne(tokens: number): number {
    return Math.max(1, Math.ceil((1 - tokens) / this.refillPerMs / 1000));
  }

  /** Number of keys held, for tests and metrics. */
  get size(): number {
    return this.buckets.size;
  }

  /** Once a minute, forgets buckets that have refilled completely (they equal a new one). */
  private sweep(nowMs: number): void {
    if (nowMs - this.lastSweep < MINUTE_MS) return;
    this.lastSweep = nowMs;
    for (const [key, bucket] of this.buckets) {
      if (this.tokensAt(bucket, nowMs) >= this.capacity) this.buckets.delete(key);
    }
  }
}

interface RateLimitedRequest {
  userId?: string;
  ip?: string;
}

export interface ReplyWithHeaders {
  header(name: string, value: string): unknown;
}

/** Limits requests per authenticated user (`request.userId`, so it must run after CredentialsGuard),
 * or per client address on routes without a user (login, refresh). When exceeded: 429 with the
 * error body and `Retry-After` in seconds. */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(@Inject(RateLimiter) private readonly limiter: RateLimiter) {}

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const request = http.getRequest<RateLimitedRequest>();
    const key = request.userId ? `user:${request.userId}` : `ip:${request.ip ?? 'unknown'}`;
    const retryAfterSeconds = this.limiter.take(key);
    if (retryAfterSeconds === 0) return true;
    throw tooManyRequests(http.getResponse<ReplyWithHeaders>(), retryAfterSeconds);
  }
}

/** 429 with the error body; sets `Retry-After` on the reply. */
export function tooManyRequests(reply: ReplyWithHeaders, retryAfterSeconds: number): HttpException {
  reply.header('Retry-After', String(retryAfterSeconds));
  return new HttpException({ code: '429', message: 'Too many requests' }, 429);
}
