import { createHmac, randomBytes } from 'node:crypto';

/** Most credentials remembered at once; the oldest go first. */
const MAX_ENTRIES = 10_000;

interface Entry {
  readonly userId: string;
  /** Epoch ms until which the entry may answer. */
  readonly until: number;
}

/** Name and password pairs that a password check accepted recently, so that a client sending Basic
 * credentials on every request pays one scrypt per lifetime instead of one per request. Only an
 * HMAC of the pair is kept, under a key drawn at random when the process starts, so the memory
 * holds nothing a password could be read or guessed from without that key. Only successes are
 * remembered (`remember`): a wrong password is checked every time. The clock is the caller's. */
export class VerifiedCredentials {
  private readonly key = randomBytes(32);
  private readonly entries = new Map<string, Entry>();

  /** `ttlMs`: how long a pair is remembered after its check. */
  constructor(private readonly ttlMs: number) {}

  /** The user id a remembered pair proves, or undefined when it is not remembered (or expired). */
  userId(name: string, password: string, nowMs: number): string | undefined {
    const digest = this.digest(name, password);
    const known = this.entries.get(digest);
    if (!known) return undefined;
    if (known.until > nowMs) return known.userId;
    this.entries.delete(digest);
    return undefined;
  }

  /** Remembers a pair that the password check has just accepted for `userId`. */
  remember(name: string, password: string, userId: string, nowMs: number): void {
    if (this.ttlMs <= 0) return;
    const digest = this.digest(name, password);
    this.entries.delete(digest);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(digest, { userId, until: nowMs + this.ttlMs });
  }

  /** Forgets every pair of the user (its password or name changed, or it was removed). */
  forgetUser(userId: string): void {
    for (const [digest, entry] of this.entries) if (entry.userId === userId) this.entries.delete(digest);
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
