import { createHmac, randomBytes } from 'node:crypto';

/** Every app password starts with this prefix: Basic credentials whose password has it are checked
 * as an app password (no scrypt), and a leaked one is recognisable (secret scanners). */
export const APP_PASSWORD_PREFIX = 'clapp_';

/** Most live app passwords a user may have at once. */
export const MAX_APP_PASSWORDS_PER_USER = 50;

const APP_PASSWORD_BYTES = 32;
/** `clapp_` plus 32 random bytes in base64url (43 characters, no padding): no colon, so HTTP Basic
 * carries it as it is. */
const APP_PASSWORD_SHAPE = /^clapp_[A-Za-z0-9_-]{43}$/;

/** A new random app password. Only its keyed hash is ever stored. */
export function generateAppPassword(): string {
  return `${APP_PASSWORD_PREFIX}${randomBytes(APP_PASSWORD_BYTES).toString('base64url')}`;
}

/** True when the password is meant as an app password (it has the prefix), whatever its shape. */
export const isAppPasswordAttempt = (password: string): boolean => password.startsWith(APP_PASSWORD_PREFIX);

/** True when the text has the shape of an app password this service issues. */
export const isAppPasswordShaped = (text: string): boolean => APP_PASSWORD_SHAPE.test(text);

/** The stored form of an app password: HMAC-SHA-256 under the installation's key, hex. The secret
 * has 256 random bits, so a fast hash is enough, as for tokens: an unkeyed one would already make
 * guessing hopeless. The key adds that the table without the key row (a partial dump, a copied
 * table) does not even tell whether a candidate password, such as one found in a client's
 * configuration, is a live one: the lookup needs the key. A full dump holds the key too, and is
 * then worth what an unkeyed hash is. */
export function hashAppPassword(password: string, key: Buffer): string {
  return createHmac('sha256', key).update(password, 'utf8').digest('hex');
}
