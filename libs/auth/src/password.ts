import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/** scrypt cost parameters. The default (N = 2^15, r = 8, p = 1) needs 32 MiB and about 80 ms per hash. */
export interface ScryptParams {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

export const DEFAULT_SCRYPT_PARAMS: ScryptParams = { N: 2 ** 15, r: 8, p: 1 };

const SALT_BYTES = 16;
const KEY_BYTES = 32;
/** Upper bounds for parameters read back from a stored hash, so a corrupt row cannot exhaust memory. */
const MAX_N = 2 ** 20;
const MAX_R = 32;
const MAX_P = 16;

/** `scrypt$N$r$p$salt$hash`, salt and hash in base64url. */
const ENCODED = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

interface DecodedHash {
  readonly params: ScryptParams;
  readonly salt: Buffer;
  readonly hash: Buffer;
}

function deriveKey(password: string, salt: Buffer, keyLength: number, params: ScryptParams): Promise<Buffer> {
  const { N, r, p } = params;
  return new Promise((resolve, reject) =>
    scrypt(
      Buffer.from(password.normalize('NFC'), 'utf8'),
      salt,
      keyLength,
      { N, r, p, maxmem: 256 * N * r * p + 1024 * 1024 },
      (error, key) => (error ? reject(error) : resolve(key)),
    ),
  );
}

function encode(params: ScryptParams, salt: Buffer, hash: Buffer): string {
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

function isPowerOfTwo(n: number): boolean {
  return Number.isSafeInteger(n) && n > 1 && (n & (n - 1)) === 0;
}

function decode(encoded: string): DecodedHash | null {
  const match = ENCODED.exec(encoded);
  if (!match) return null;
  const [N, r, p] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (!isPowerOfTwo(N) || N > MAX_N || r < 1 || r > MAX_R || p < 1 || p > MAX_P) return null;
  const salt = Buffer.from(match[4], 'base64url');
  const hash = Buffer.from(match[5], 'base64url');
  if (salt.length < 8 || hash.length < 16) return null;
  return { params: { N, r, p }, salt, hash };
}

/** Hashes a password with a fresh random salt; the answer carries its own parameters. */
export async function hashPassword(
  password: string,
  params: ScryptParams = DEFAULT_SCRYPT_PARAMS,
): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  return encode(params, salt, await deriveKey(password, salt, KEY_BYTES, params));
}

/** True when the password matches the encoded hash; the comparison is constant-time. A hash that
 * cannot be decoded never matches. */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const decoded = decode(encoded);
  if (!decoded) return false;
  const candidate = await deriveKey(password, decoded.salt, decoded.hash.length, decoded.params);
  return timingSafeEqual(candidate, decoded.hash);
}

/** A well-formed hash no password matches (random salt and digest, no scrypt needed to build it).
 * Verifying against it costs one scrypt, like verifying a real user, so the time a failed login
 * takes does not reveal whether the user exists. */
export function dummyPasswordHash(params: ScryptParams = DEFAULT_SCRYPT_PARAMS): string {
  return encode(params, randomBytes(SALT_BYTES), randomBytes(KEY_BYTES));
}
