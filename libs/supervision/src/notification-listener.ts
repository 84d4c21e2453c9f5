import { Client, ClientConfig } from 'pg';
import { retry } from './backoff';
import { DependencyHealth, messageOf } from './health';
import { ignoreLog, LogFn } from './log';
import { connectionSettings } from './postgres';

export interface NotificationHandlers {
  readonly notice: (channel: string, payload: string) => void;
  /** Called each time the listener (re)starts listening: notices sent while it was not are lost,
   * so this is where the caller catches up from the tables. A rejection counts as a failed
   * connection attempt. */
  readonly listening: () => Promise<void>;
  /** Called once per loss, before reconnecting starts. */
  readonly lost: (error: Error) => void;
}

export interface NotificationListenerOptions {
  /** The name under which `health` and the log know this connection. */
  readonly component: string;
  readonly health?: DependencyHealth;
  readonly log?: LogFn;
  readonly connectTimeoutMs?: number;
}

/** One PostgreSQL connection LISTENing on `channels`: castlog's one way to hear NOTIFY. When the
 * connection is lost it reconnects with capped backoff for as long as it takes, and after each
 * reconnection calls `listening` so the caller re-reads what it may have missed while deaf. Notices
 * on one connection arrive in commit order, which is why one listener serves all of a process's
 * channels that need ordering. `database` is a URL or a pool's settings (its own connection, not
 * one of the pool's). */
export class NotificationListener {
  private client?: Client;
  private reconnecting?: Promise<unknown>;
  /** Whether a start has succeeded: from then on a lost connection is reconnected here. */
  private started = false;
  private readonly closed = new AbortController();
  private readonly log: LogFn;

  constructor(
    private readonly database: string | ClientConfig,
    private readonly channels: readonly string[],
    private readonly handlers: NotificationHandlers,
    private readonly options: NotificationListenerOptions,
  ) {
    this.log = options.log ?? ignoreLog;
  }

  /** Listens; a failure of this first connection rejects (start-up errors surface), and `start`
   * may then be called again. */
  async start(): Promise<void> {
    await this.connect();
  }

  get isListening(): boolean {
    return this.client !== undefined;
  }

  private async connect(): Promise<void> {
    const client = new Client({
      ...(typeof this.database === 'string' ? { connectionString: this.database } : this.database),
      ...connectionSettings(this.options.connectTimeoutMs ?? 5_000),
    });
    client.on('notification', (message) => {
      if (message.payload !== undefined && this.client === client)
        this.handlers.notice(message.channel, message.payload);
    });
    // Errors before this client is the current one reject the awaits below instead.
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    try {
      await client.connect();
      for (const channel of this.channels) await client.query(`LISTEN ${channel}`);
      if (this.closed.signal.aborted) throw new Error('closed');
      this.client = client;
      await this.handlers.listening();
      // A connection lost while catching up has nothing listening: fail this attempt, so the
      // start's caller or the reconnecting loop tries again.
      if (this.client !== client) throw new Error('connection lost while catching up');
    } catch (error) {
      if (this.client === client) this.client = undefined;
      await client.end().catch(() => undefined);
      throw error;
    }
    this.started = true;
    this.options.health?.restored(this.options.component);
  }

  private lost(client: Client, error: Error): void {
    if (this.client !== client || this.closed.signal.aborted) return;
    this.client = undefined;
    void client.end().catch(() => undefined);
    // Before the first start succeeds, `start` rejects and its caller decides what follows.
    if (!this.started) return;
    this.log('warn', `${this.options.component}: connection lost (${messageOf(error)}); reconnecting`);
    this.options.health?.lost(this.options.component, error);
    this.handlers.lost(error);
    this.reconnecting ??= retry(() => this.connect(), {
      signal: this.closed.signal,
      onFailure: (failure) => this.options.health?.lost(this.options.component, failure),
    }).then(() => {
      this.reconnecting = undefined;
      if (this.client) this.log('info', `${this.options.component}: listening again`);
    });
  }

  async close(): Promise<void> {
    this.closed.abort();
    const client = this.client;
    this.client = undefined;
    await this.reconnecting;
    await client?.end().catch(() => undefined);
  }
}
