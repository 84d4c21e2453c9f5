import {
  AuthStore,
  changedUserOf,
  hashToken,
  isAppPasswordAttempt,
  SessionKind,
  TOKENS_CHANNEL,
  TokenOwner,
} from '@castlog/auth';
import { CONFIG, Config } from '@castlog/config';
import { Database } from '@castlog/read-model';
import { DependencyHealth, ExpiringMap, NotificationListener } from '@castlog/supervision';
import { DATABASE } from '@castlog/runtime';
import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { VerifiedCredentials } from './verified-credentials';

/** Most tokens remembered at once; the oldest go first. */
const MAX_ENTRIES = 10_000;

/** What a token proves: a Bearer credential (access or CLI token), a gpodder.net session or a web
 * page session. */
type Use = 'bearer' | SessionKind;

/** Who Basic credentials prove; with the app password, when they carried one. */
export interface BasicOwner {
  readonly userId: string;
  readonly appPasswordId?: string;
}

interface Entry {
  readonly use: Use;
  readonly owner: TokenOwner;
}

/** Remembers which user a valid access or CLI token, or a gpodder.net or web session, belongs to,
 * so a request with a known token costs no query; and which Basic credentials a password check
 * accepted (VerifiedCredentials), so a client sending them on every request costs no scrypt each
 * time. A token is forgotten as soon as PostgreSQL announces that it was revoked or deleted (a
 * trigger sends its hash on `castlog_tokens`, whoever changed it), at its expiry, and after
 * TOKEN_CACHE_TTL; a user's credentials and tokens as soon as PostgreSQL announces that its
 * password or name changed, that it was removed or that one of its app passwords was revoked
 * (`user:<id>` on the same channel), and after TOKEN_CACHE_TTL. While the announcements cannot be
 * heard (the listener is down), nothing is remembered and every token and password is checked.
 * Basic credentials with an app password are never remembered: their check is one indexed query
 * and no scrypt, so remembering would save little, and not remembering them makes a revocation
 * hold from the next request on in every process, announced or not. */
@Injectable()
export class TokenCache implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(TokenCache.name);
  private readonly entries = new ExpiringMap<string, Entry>(MAX_ENTRIES);
  private readonly listener: NotificationListener;
  private listening = false;
  /** Counts announcements: a lookup that an announcement overtook is not remembered. */
  private generation = 0;
  private readonly credentials: VerifiedCredentials;
  /** Counts user announcements: a password check that one overtook is not remembered. */
  private userGeneration = 0;

  constructor(
    @Inject(AuthStore) private readonly store: AuthStore,
    @Inject(CONFIG) private readonly config: Config,
    @Inject(DATABASE) database: Database,
    health: DependencyHealth,
  ) {
    this.credentials = new VerifiedCredentials(config.TOKEN_CACHE_TTL);
    this.listener = new NotificationListener(
      database.url,
      [TOKENS_CHANNEL],
      {
        notice: (_channel, payload) => this.announced(payload),
        listening: async () => {
          this.forgetAll();
          this.listening = true;
        },
        // Revocations may be missed until we listen again: every token is looked up meanwhile.
        lost: () => {
          this.listening = false;
          this.forgetAll();
        },
      },
      {
        component: 'token-notices',
        health,
        log: (level, message) => this.logger[level === 'info' ? 'log' : level](message),
      },
    );
  }

  async onModuleInit(): Promise<void> {
    if (this.config.TOKEN_CACHE_TTL > 0) await this.listener.start();
  }

  async onModuleDestroy(): Promise<void> {
    this.listening = false;
    await this.listener.close();
  }

  /** The user id the token belongs to, or null; as `AuthStore.authenticateToken`. */
  async authenticateToken(token: string, now: Date = new Date()): Promise<string | null> {
    return (await this.tokenOwner(token, now))?.userId ?? null;
  }

  /** The owner of a live access or CLI token, or null; as `AuthStore.tokenOwner`. */
  tokenOwner(token: string, now: Date = new Date()): Promise<TokenOwner | null> {
    return this.owner('bearer', token, now);
  }

  /** The owner of a live session of this kind (gpodder.net's unless told), or null; as
   * `AuthStore.sessionOwner`. */
  sessionOwner(
    token: string,
    now: Date = new Date(),
    kind: SessionKind = 'session',
  ): Promise<TokenOwner | null> {
    return this.owner(kind, token, now);
  }

  /** Forgets a token this process has just ended, without waiting for PostgreSQL's notice, so the
   * next request to this process already refuses it. */
  forgetToken(token: string): void {
    this.forget(hashToken(token));
  }

  /** The user id when the name and password (the user's own or one of its app passwords) are
   * right, otherwise null; see `authenticateBasic`. */
  async authenticatePassword(name: string, password: string, now: Date = new Date()): Promise<string | null> {
    return (await this.authenticateBasic(name, password, now))?.userId ?? null;
  }

  /** Who Basic credentials prove, or null. A password with the app password prefix is checked as
   * an app password (`AuthStore.appPasswordOwner`: no scrypt, never remembered), any other as the
   * user's own (`AuthStore.authenticatePassword`, which runs only for credentials not accepted
   * recently). */
  async authenticateBasic(
    name: string,
    password: string,
    now: Date = new Date(),
  ): Promise<BasicOwner | null> {
    if (isAppPasswordAttempt(password)) return this.store.appPasswordOwner(name, password, now);
    if (!this.listening) return this.ownPassword(name, password);
    const known = this.credentials.userId(name, password, now.getTime());
    if (known !== undefined) return { userId: known };
    const generation = this.userGeneration;
    const owner = await this.ownPassword(name, password);
    if (owner && this.listening && generation === this.userGeneration)
      this.credentials.remember(name, password, owner.userId, now.getTime());
    return owner;
  }

  private async ownPassword(name: string, password: string): Promise<BasicOwner | null> {
    const userId = await this.store.authenticatePassword(name, password);
    return userId ? { userId } : null;
  }

  private async owner(use: Use, token: string, now: Date): Promise<TokenOwner | null> {
    const lookUp = () =>
      use === 'bearer' ? this.store.tokenOwner(token, now) : this.store.sessionOwner(token, now, use);
    if (!this.listening) return lookUp();
    const hash = hashToken(token);
    const known = this.entries.get(hash, now.getTime());
    if (known) return known.use === use ? known.owner : null;
    const generation = this.generation;
    const owner = await lookUp();
    if (owner && this.listening && generation === this.generation) {
      // TOKEN_CACHE_TTL after the lookup, never past the token's expiry.
      const until = Math.min(now.getTime() + this.config.TOKEN_CACHE_TTL, owner.expiresAt.getTime());
      this.entries.set(hash, { use, owner }, until);
    }
    return owner;
  }

  private announced(payload: string): void {
    const userId = changedUserOf(payload);
    if (userId === undefined) {
      this.forget(payload);
    } else {
      this.userGeneration += 1;
      this.credentials.forgetUser(userId);
      // A session bought with an app password that a revocation did not catch (issued while it ran)
      // is refused by the store once asked again.
      this.generation += 1;
      this.entries.deleteWhere((entry) => entry.owner.userId === userId);
    }
  }

  private forget(hash: string): void {
    this.generation += 1;
    this.entries.delete(hash);
  }

  private forgetAll(): void {
    this.generation += 1;
    this.userGeneration += 1;
    this.entries.clear();
    this.credentials.forgetAll();
  }
}
