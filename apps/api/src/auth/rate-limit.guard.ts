import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { RateLimitStore } from '@castlog/auth';
import { CONFIG, type Config } from '@castlog/config';
import { TooManyRequests } from '../http/errors';

/** The API's rate limits: token buckets of `RATE_LIMIT_PER_MINUTE` requests at once per key,
 * refilled at that rate per minute, kept in PostgreSQL (RateLimitStore) so that every API replica
 * takes from the same buckets. 0 disables the limit. The clock is this process's, in epoch ms.
 * Database errors propagate (the request answers 503): the limit never fails open. */
@Injectable()
export class RateLimiter {
  private readonly store: RateLimitStore;

  constructor(
    @Inject(CONFIG) config: Pick<Config, 'RATE_LIMIT_PER_MINUTE'>,
    @Inject(DataSource) dataSource: DataSource,
  ) {
    this.store = new RateLimitStore(dataSource, config.RATE_LIMIT_PER_MINUTE);
  }

  /** Takes one request from the key's bucket. Answers 0 when allowed, otherwise the whole seconds
   * until the next request would be (at least 1). */
  take(key: string, nowMs: number = Date.now()): Promise<number> {
    return this.store.take(key, nowMs);
  }

  /** Like `take`, without taking: 0 when the key's bucket holds a request, otherwise the whole
   * seconds until it will. */
  peek(key: string, nowMs: number = Date.now()): Promise<number> {
    return this.store.peek(key, nowMs);
  }
}

/** What the guards use of the rate limits (unit tests give them a fake). */
export type RateLimits = Pick<RateLimiter, 'take' | 'peek'>;

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
  constructor(@Inject(RateLimiter) private readonly limiter: RateLimits) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<RateLimitedRequest>();
    const key = request.userId ? `user:${request.userId}` : `ip:${request.ip ?? 'unknown'}`;
    const retryAfterSeconds = await this.limiter.take(key);
    if (retryAfterSeconds === 0) return true;
    throw new TooManyRequests(retryAfterSeconds);
  }
}

/** Failed credentials, counted per client address: once RATE_LIMIT_PER_MINUTE have failed, a
 * request presenting credentials from that address answers 429 before any is checked (which
 * bounds password guessing and the scrypt work it costs). A request without credentials costs
 * nothing and is not counted. One bookkeeping for the /v1 and the gpodder.net guards. */
export class FailedCredentials {
  private readonly key: string;

  constructor(
    private readonly limiter: RateLimits,
    request: { ip?: string },
    private readonly presented: boolean,
  ) {
    this.key = `failed-credentials:${request.ip ?? 'unknown'}`;
  }

  /** 429 (thrown) while the address is past its limit. */
  async refuseWhileBlocked(): Promise<void> {
    if (!this.presented) return;
    const retryAfterSeconds = await this.limiter.peek(this.key);
    if (retryAfterSeconds > 0) throw new TooManyRequests(retryAfterSeconds);
  }

  /** Counts a failure of the credentials presented. */
  async failed(): Promise<void> {
    if (this.presented) await this.limiter.take(this.key);
  }
}
