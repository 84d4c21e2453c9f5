import { Client } from 'pg';

/** Channel on which the projector announces stored offsets (payload: JSON OffsetNotice). */
export const OFFSETS_CHANNEL = 'castlog_offsets';

export interface OffsetNotice {
  readonly schema: string;
  readonly partition: number;
  readonly next: number;
}

/** Channel on which a projection version announces that it now serves reads (payload: JSON
 * ProjectionNotice). Sent in the transaction that switches, so a listener hears it after every
 * offset notice the previous version sent before the switch. */
export const PROJECTIONS_CHANNEL = 'castlog_projections';

export interface ProjectionNotice {
  readonly base: string;
  readonly version: number;
  readonly schema: string;
}

const RECONNECT_DELAY_MS = 1000;

export interface NotificationHandlers {
  readonly notice: (channel: string, payload: string) => void;
  /** Called each time the listener (re)starts listening: notices sent while it was not are lost,
   * so this is where the caller catches up from the tables. */
  readonly listening: () => Promise<void>;
  readonly lost: (error: Error) => void;
}

/** One PostgreSQL connection LISTENing on `channels`, reconnecting when it is lost. Notices on one
 * connection arrive in commit order, which is why one listener serves all of a process's channels. */
export class NotificationListener {
  private client?: Client;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly channels: readonly string[],
    private readonly handlers: NotificationHandlers,
  ) {}

  async start(): Promise<void> {
    const client = new Client({ connectionString: this.url });
    client.on('notification', (message) => {
      if (message.payload) this.handlers.notice(message.channel, message.payload);
    });
    client.on('error', (error) => {
      this.handlers.lost(error);
      void client.end().catch(() => undefined);
      if (!this.closed) setTimeout(() => void this.start().catch(() => undefined), RECONNECT_DELAY_MS);
    });
    await client.connect();
    for (const channel of this.channels) await client.query(`LISTEN ${channel}`);
    this.client = client;
    await this.handlers.listening();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.client?.end().catch(() => undefined);
  }
}
