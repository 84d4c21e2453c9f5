import { ExpiringMap } from '@castlog/supervision';
import { createHmac, randomBytes } from 'node:crypto';

/** Most credentials remembered at once; the oldest go first. */
const MAX_ENTRIES = 10_000;

/** Name and password pairs that a password check accepted recently, so that a client sending Basic
 * credentials on every request pays one scrypt per lifetime instead of one per request. Only an
 * HMAC of the pair is kept, under a key drawn at random when the process starts, so the memory
 * holds nothing a password could be read or guessed from without that key. Only successes are
 * remembered (`remember`): a wrong password is checked every time. The clock is the caller's. */
export class VerifiedCredentials {
  private readonly key = randomBytes(32);
  /** The user id each remembered pair's digest proves. */
  private readonly entries = new ExpiringMap<string, string>(MAX_ENTRIES);

  /** `ttlMs`: how long a pair is remembered after its check. */
  constructor(private readonly ttlMs: number) {}

  /** The user id a remembered pair proves, or undefined when it is not remembered (or expired). */
  userId(name: string, password: string, nowMs: number): string | undefined {
    return this.entries.get(this.digest(name, password), nowMs);
  }

  /** Remembers a pair that the password check has just accepted for `userId`. */
  remember(name: string, password: string, userId: string, nowMs: number): void {
    if (this.ttlMs <= 0) return;
    this.entries.set(this.digest(name, password), userId, nowMs + this.ttlMs);
  }

  /** Forgets every pair of the user (its password or name changed, or it was removed). */
  forgetUser(userId: string): void {
    this.entries.deleteWhere((owner) => owner === userId);
  }

  forgetAll(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  /** The name's length first, so that no two pairs give the same text. */
  private digest(name: string, password: string): string {
    return createHmac('sha256', this.key)
      .update(`${name.length}:${name}:${password}`, 'utf8')
      .digest('base64url');
  }
}
