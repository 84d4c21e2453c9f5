import { isIP } from 'node:net';
import { z } from 'zod';

const duration = z
  .string()
  .regex(/^\d+(ms|s|m|h|d)?$/, 'must be a duration such as 500ms, 30s, 5m, 12h or 30d')
  .transform(parseDuration);

export function parseDuration(text: string): number {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!match) throw new Error(`not a duration: ${text}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? 'ms'] ?? 1;
  return Number(match[1]) * unit;
}

/** The longest token lifetime: a hundred years, far inside what a date can hold. */
export const MAX_TOKEN_TTL_MS = 36_500 * 86_400_000;

/** Where the embedded mode keeps its files unless CASTLOG_DATA_DIR says otherwise. */
export const DEFAULT_DATA_DIR = './data';

/** The longest READ_MODEL_SCHEMA: PostgreSQL keeps 63 characters of a name and silently drops the
 * rest, and the longest name castlog derives from it is a replay of the last projection version's
 * schema, `<name>_v9999_replay` (13 more). */
export const READ_MODEL_SCHEMA_MAX_LENGTH = 50;

/** A schema name castlog accepts: a lower-case SQL identifier, which needs no quoting. */
export const LOWER_CASE_IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/** The body limit of the gpodder.net upload routes (10,000 episode actions or URLs), and the most
 * BODY_LIMIT_BYTES may be: the largest event such a body produces (about 4.6 MiB) fits the event
 * log's message limits (docs/operations.md, "Message sizes"). */
export const UPLOAD_BODY_LIMIT_BYTES = 4 * 1024 * 1024;

/** The longest a timer can wait: Node runs a longer setTimeout after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A duration that is more than 0 and at most `max` ms, said in the unit a reader would use. */
const positiveDuration = (max: number, maxText: string) =>
  duration
    .refine((ms) => ms > 0, 'must be more than 0')
    .refine((ms) => ms <= max, `must be at most ${maxText}`);

/** A duration a timer waits: more than 0, at most about 24 days. */
const timer = positiveDuration(MAX_TIMER_MS, '24d');

/** A token's lifetime: more than 0, at most 36500d. */
const tokenTtl = positiveDuration(MAX_TOKEN_TTL_MS, '36500d');

/** An integer; an empty value is refused rather than read as 0. */
const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.preprocess(
    (value) => (typeof value === 'string' && value.trim() === '' ? Number.NaN : value),
    z.coerce.number({ invalid_type_error: 'must be a whole number' }).int().min(min).max(max),
  );

/** An on/off switch: true/false, on/off, yes/no or 1/0, in any case. */
const onOff = z
  .string()
  .trim()
  .toLowerCase()
  .refine(
    (text) => /^(true|false|on|off|yes|no|1|0)$/.test(text),
    'must be on or off (true/false, yes/no, 1/0)',
  )
  .transform((text) => /^(true|on|yes|1)$/.test(text));

/** A comma-separated list, each entry trimmed and `valid` (otherwise `message`); empty: none. */
const commaList = (valid: (entry: string) => boolean, message: string) =>
  z
    .string()
    .trim()
    .refine((text) => text === '' || text.split(',').every((entry) => valid(entry.trim())), message)
    .transform((text) => (text === '' ? [] : text.split(',').map((entry) => entry.trim())))
    .default('');

/** An IPv4 or IPv6 address with a prefix length that fits it: `10.0.0.0/8`, `fd00::/8`. */
export function isCidr(text: string): boolean {
  const match = /^([^/]+)\/(\d{1,3})$/.exec(text);
  if (!match) return false;
  const version = isIP(match[1] ?? '');
  return version !== 0 && Number(match[2]) <= (version === 4 ? 32 : 128);
}

/** Every setting, its default and its check. The README's configuration table documents each one. */
export const configSchema = z.object({
  PORT: int(0, 65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  /** Where clients reach the API (behind a reverse proxy, say): the start of absolute links such as
   * `next`. Unset: the request's own scheme and Host. */
  PUBLIC_URL: z
    .string()
    .refine((text) => {
      const url = URL.canParse(text) ? new URL(text) : null;
      return url !== null && /^https?:$/.test(url.protocol) && !url.search && !url.hash && !url.username;
    }, 'must be an http:// or https:// URL without credentials, query or fragment')
    .transform((text) => text.replace(/\/+$/, ''))
    .optional(),
  /** The origins (`https://app.example`) a browser-based client may call `/v1` and the sync draft's
   * face from; the gpodder.net face answers every origin, as gpodder.net does. */
  CORS_ORIGINS: commaList(
    isOrigin,
    'must be a comma-separated list of origins, such as https://app.example,http://localhost:8080',
  ),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  CASTLOG_DATA_DIR: z.string().min(1).default(DEFAULT_DATA_DIR),
  DATABASE_URL: z
    .string()
    .refine(
      (text) => URL.canParse(text) && /^postgres(ql)?:$/.test(new URL(text).protocol),
      'must be a postgres:// URL',
    )
    .optional(),
  DATABASE_POOL_SIZE: int(1, 1000).default(10),
  DATABASE_CONNECT_TIMEOUT: timer.default('5s'),
  READ_MODEL_SCHEMA: z
    .string()
    .regex(LOWER_CASE_IDENTIFIER, 'must be a lower-case SQL identifier')
    .max(
      READ_MODEL_SCHEMA_MAX_LENGTH,
      `must be at most ${READ_MODEL_SCHEMA_MAX_LENGTH} characters, so that the schemas named after it ` +
        `(<name>_v9999, <name>_v9999_replay) keep within PostgreSQL's 63`,
    )
    .default('castlog'),
  KAFKA_BROKERS: z
    .string()
    .regex(/^[^,\s]+(,[^,\s]+)*$/, 'must be a comma-separated list of host:port')
    .optional(),
  KAFKA_TOPIC: z.string().min(1).default('castlog.subscriptions'),
  KAFKA_PARTITIONS: int(1, 10_000).default(12),
  KAFKA_REPLICATION_FACTOR: int(1, 100).default(1),
  KAFKA_CLIENT_ID: z.string().min(1).default('castlog'),
  KAFKA_SESSION_TIMEOUT: timer.default('30s'),
  PROJECTOR_GROUP: z.string().min(1).default('castlog-projector'),
  PROJECTION_VERSION: int(1, 9999).default(1),
  PROJECTOR_BATCH_SIZE: int(1, 100_000).default(8000),
  /** Cascades the deletion saga runs at once. Each holds a pooled connection while it waits for its
   * user's clock lock, which a projector transaction holds until it commits. */
  DELETION_SAGA_CONCURRENCY: int(1, 1000).default(2),
  READ_YOUR_WRITES_TIMEOUT: timer.default('5s'),
  /** The longest a request may go unanswered: then 503 with Retry-After, whatever it waits for (a
   * PostgreSQL that stopped answering on a connection already open, say). */
  REQUEST_TIMEOUT: timer.default('15s'),
  READY_MAX_PROJECTION_LAG: int(0).default(10_000),
  RETRY_AFTER_SECONDS: int(1, 3600).default(1),
  RATE_LIMIT_PER_MINUTE: int(0).default(600),
  BODY_LIMIT_BYTES: int(1024, UPLOAD_BODY_LIMIT_BYTES).default(1024 * 1024),
  ACCESS_TOKEN_TTL: tokenTtl.default('1h'),
  REFRESH_TOKEN_TTL: tokenTtl.default('30d'),
  CLI_TOKEN_TTL: tokenTtl.default('365d'),
  TOKEN_CACHE_TTL: duration.default('60s'),
  SHUTDOWN_TIMEOUT: timer.default('15s'),
  /** The gpodder.net API (`/api/2/...` and the simple API's `/subscriptions/...`); when off its
   * routes are absent (404) and `/v1/capabilities` does not list it. */
  GPODDER_API: onOff.default('on'),
  /** The web pages (`/web/…`): sign in, subscriptions, devices, history, OPML, app passwords, the
   * account and administration; when off their routes are absent (404). */
  WEB_UI: onOff.default('on'),
  /** How long a web page sign-in lasts without use (each use within it renews it). */
  WEB_SESSION_TTL: tokenTtl.default('30d'),
  /** The feed resolver, which follows the log and fetches every subscribed feed into the catalog;
   * when off nothing is fetched and names fall back to URLs. */
  FEEDS: onOff.default('on'),
  /** The consumer group (Kafka) the feed resolvers follow the log as. */
  FEEDS_GROUP: z.string().min(1).default('castlog-feed-resolver'),
  /** How often each known feed is fetched again; also the longest a failing feed waits. */
  FEED_REFRESH_INTERVAL: timer.default('24h'),
  FEED_FETCH_TIMEOUT: timer.default('30s'),
  FEED_MAX_BYTES: int(1024, 1024 * 1024 * 1024).default(5 * 1024 * 1024),
  FEED_MAX_REDIRECTS: int(0, 20).default(5),
  /** Fetches in flight at once, and at once from one host. */
  FEED_CONCURRENCY: int(1, 1000).default(16),
  FEED_HOST_CONCURRENCY: int(1, 100).default(2),
  /** Fetches a resolver process starts a second, at most (10,000 new feeds in under 7 minutes). */
  FEED_FETCH_RATE: int(1, 10_000).default(25),
  /** Fetches of loopback, private, link-local and unique-local addresses are refused unless this
   * allows them all (a home network) or FEEDS_ALLOWED_RANGES lists theirs. */
  FEEDS_ALLOW_PRIVATE: onOff.default('off'),
  FEEDS_ALLOWED_RANGES: commaList(
    isCidr,
    'must be a comma-separated list of CIDR ranges, such as 192.168.1.0/24,fd00::/8',
  ),
});

export type Config = z.infer<typeof configSchema>;

/** An origin as a browser sends it: an http(s) scheme, a host and an optional port, nothing else. */
function isOrigin(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return /^https?:$/.test(url.protocol) && url.origin === text;
}

export class ConfigError extends Error {}

/** Reads and checks the configuration; a bad value names the variable and what is wrong. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}
