import { DataSource } from 'typeorm';

const MINUTE_MS = 60_000;

/** Parameters every statement below shares: `$1` now (epoch ms), `$2` the capacity, `$3` the refill
 * per ms. */
type BucketParams = [nowMs: number, capacity: number, refillPerMs: number];

/** The tokens the bucket row `b` holds at `$1`: what it held at its last update, refilled at `$3`
 * per ms since, at most `$2`. Time before the last update (another replica's clock is ahead)
 * refills nothing. The only place the bucket arithmetic lives. */
const REFILLED = `LEAST($2::float8, b.tokens + GREATEST(0, $1::bigint - b.updated_at_ms)::float8 * $3::float8)`;

/** Takes one token from the bucket `$4` (a new bucket starts full), in one statement: concurrent
 * takes on the key, from any process, queue on its row, so no two take the last token. A refused
 * take only refills the bucket. */
const TAKE = `
  INSERT INTO castlog_auth.rate_limit_buckets AS b (key, tokens, updated_at_ms, last_take_allowed)
  VALUES ($4, $2::float8 - 1, $1::bigint, true)
  ON CONFLICT (key) DO UPDATE SET
    tokens = CASE WHEN ${REFILLED} >= 1 THEN ${REFILLED} - 1 ELSE ${REFILLED} END,
    updated_at_ms = GREATEST(b.updated_at_ms, $1::bigint),
    last_take_allowed = ${REFILLED} >= 1
  RETURNING tokens, last_take_allowed`;

const PEEK = `SELECT ${REFILLED} AS tokens FROM castlog_auth.rate_limit_buckets b WHERE b.key = $4`;

/** Buckets that have refilled completely equal a missing one. */
const SWEEP = `DELETE FROM castlog_auth.rate_limit_buckets b WHERE ${REFILLED} >= $2::float8`;

/** Token buckets in PostgreSQL (castlog_auth.rate_limit_buckets, migration
 * RateLimitBuckets1732400000005), so that every process sharing the database shares the limits:
 * `perMinute` requests at once per key, refilled at that rate per minute; 0 disables the limit
 * (and no statement runs). `nowMs` is the caller's clock in epoch ms; replicas' clocks may differ a
 * little, and a bucket never refills for time before its last update. Database errors reach the
 * caller: no answer is made up without the database. */
export class RateLimitStore {
  private readonly refillPerMs: number;
  private lastSweepMs = -Infinity;

  constructor(
    private readonly dataSource: DataSource,
    private readonly perMinute: number,
  ) {
    if (!Number.isSafeInteger(perMinute) || perMinute < 0)
      throw new RangeError(`rate limit must be a whole number >= 0 per minute: ${perMinute}`);
    this.refillPerMs = perMinute / MINUTE_MS;
  }

  /** Takes one request from the key's bucket, one statement (and, at most once a minute per
   * store, a sweep of refilled buckets beside it). Answers 0 when allowed, otherwise the whole
   * seconds until the next request would be (at least 1). */
  async take(key: string, nowMs: number): Promise<number> {
    if (this.perMinute === 0) return 0;
    const params = this.params(nowMs);
    const [rows] = await Promise.all([
      this.dataSource.query<{ tokens: number; last_take_allowed: boolean }[]>(TAKE, [...params, key]),
      this.sweep(params),
    ]);
    const bucket = rows[0]!;
    return bucket.last_take_allowed ? 0 : this.secondsUntilOne(bucket.tokens);
  }

  /** Like `take`, without taking: 0 when the key's bucket holds a request, otherwise the whole
   * seconds until it will. */
  async peek(key: string, nowMs: number): Promise<number> {
    if (this.perMinute === 0) return 0;
    const [bucket] = await this.dataSource.query<{ tokens: number }[]>(PEEK, [...this.params(nowMs), key]);
    return !bucket || bucket.tokens >= 1 ? 0 : this.secondsUntilOne(bucket.tokens);
  }

  private params(nowMs: number): BucketParams {
    if (!Number.isFinite(nowMs)) throw new RangeError(`now must be epoch ms: ${nowMs}`);
    return [Math.floor(nowMs), this.perMinute, this.refillPerMs];
  }

  /** Whole seconds (at least 1) until a bucket holding `tokens` (< 1) holds one. */
  private secondsUntilOne(tokens: number): number {
    return Math.max(1, Math.ceil((1 - tokens) / this.refillPerMs / 1000));
  }

  /** Once a minute by the callers' clock (or when it went back), deletes the buckets that have
   * refilled completely. */
  private async sweep(params: BucketParams): Promise<void> {
    const [nowMs] = params;
    const sinceLastMs = nowMs - this.lastSweepMs;
    if (sinceLastMs >= 0 && sinceLastMs < MINUTE_MS) return;
    this.lastSweepMs = nowMs;
    await this.dataSource.query(SWEEP, params);
  }
}
