import { randomUUID } from 'node:crypto';
import { ApiClient } from '../support/api-client';
import { feed, guid } from '../support/contract';
import { syncAction, SyncAction } from '../support/sync-face';

export interface LoadUser {
  readonly id: string;
  readonly name: string;
  readonly token: string;
}

/** A sync face write's one action: the same action (action_id, occurred_at, data) is sent again
 * until a 200 answers it. */
export interface SyncWrite {
  readonly action: SyncAction;
  /** The subscription's feed URL: subscribed, or unsubscribed by `sync_id`. */
  readonly feedUrl: string;
  /** The action's result status in the 200 that answered it. */
  readonly status?: string;
  /** The sync_id of the subscription the 200 answered. */
  readonly syncId?: string;
}

/** One write as its client saw it: the status answered, or `cut` when the connection failed or
 * no answer came in time. Every request carries its own request id, which its event keeps. */
export interface Write {
  readonly user: LoadUser;
  /** `gpodder-add`: the feed added through the gpodder.net face's upload (no guid of the client's);
   * `sync-subscribe` and `sync-unsubscribe`: one action through the sync face's POST;
   * `gpodder-settings`: one account setting, `drill-<guid>`, set to the request id. */
  readonly kind:
    'add' | 'unsubscribe' | 'gpodder-add' | 'sync-subscribe' | 'sync-unsubscribe' | 'gpodder-settings';
  readonly requestId: string;
  readonly guid: string;
  readonly feedUrl: string;
  /** The API process it was sent to. */
  readonly target: string;
  readonly status: number | 'cut';
  readonly at: number;
  /** Sync face writes: the action, and what a 200 answered of it. */
  readonly sync?: SyncWrite;
}

const REQUEST_TIMEOUT_MS = 20_000;

/** What each writer sends, round by round: `/v1` adds and unsubscribes, gpodder.net uploads and
 * settings, and sync face subscribes and unsubscribes. */
const ROUNDS: readonly Write['kind'][] = [
  'add',
  'gpodder-add',
  'sync-subscribe',
  'unsubscribe',
  'gpodder-add',
  'sync-unsubscribe',
  'gpodder-settings',
];

/** A writer's account settings stay under gpodder.net's per-scope bound of 100 keys: past this many
 * it adds feeds instead. */
const MAX_SETTINGS_WRITES = 80;

/** Concurrent writers, one per user, each sending one request at a time to the API processes that
 * `targets` names (round robin): new subscriptions through `/v1` (each with its own feed URL and
 * guid) and the gpodder.net face's upload, sync face subscribes of new feeds, gpodder.net account
 * settings, and sometimes an
 * unsubscribe (`/v1` PATCH, or a sync unsubscribe) of one of its own acknowledged subscriptions
 * that no unanswered request has touched. A sync action that gets no 200 is sent again, the same
 * action with the same action_id, until one answers it, as a client of the draft retries.
 * Everything is recorded. */
export class Load {
  readonly writes: Write[] = [];
  private running = false;
  private writers: Promise<void>[] = [];

  constructor(
    private readonly users: readonly LoadUser[],
    private readonly targets: () => readonly string[],
    /** A new feed URL, named after what the feed is for. */
    private readonly feedOf: (label: string) => string = feed,
  ) {}

  start(): void {
    this.running = true;
    this.writers = this.users.map((user, index) => this.write(user, index));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.writers);
  }

  acknowledged(from = 0): Write[] {
    return this.writes.slice(from).filter((w) => w.status === 200);
  }

  /** Whether every user has had a write acknowledged at or after `since` (epoch ms). */
  everyUserAcknowledgedSince(since: number): boolean {
    const users = new Set(this.writes.filter((w) => w.status === 200 && w.at >= since).map((w) => w.user.id));
    return this.users.every((user) => users.has(user.id));
  }

  /** When every user had a write acknowledged at or after `since` (epoch ms), if they all have. */
  recoveredAt(since: number): number | undefined {
    let latest = since;
    for (const user of this.users) {
      const first = this.writes.find((w) => w.user.id === user.id && w.status === 200 && w.at >= since);
      if (!first) return undefined;
      latest = Math.max(latest, first.at);
    }
    return latest;
  }

  private async write(user: LoadUser, index: number): Promise<void> {
    const writer = new Writer(this.feedOf);
    for (let round = index; this.running; round += 1) {
      const targets = this.targets();
      const target = targets[round % targets.length]!;
      const api = new ApiClient(target, `Bearer ${user.token}`);
      const next = writer.next(ROUNDS[round % ROUNDS.length]!);
      const requestId = randomUUID();
      const answer = await send(api, requestId, next, user.name, writer.clientId);
      const write: Write = { user, ...next, requestId, target, status: answer.status, at: Date.now() };
      const recorded = next.sync === undefined ? write : { ...write, sync: { ...next.sync, ...answer.sync } };
      this.writes.push(recorded);
      writer.answered(recorded);
      // A refused request is retried by a real client after Retry-After; here the next one goes
      // out at once, so the outage is seen by many requests.
      if (answer.status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

type Planned = Pick<Write, 'kind' | 'guid' | 'feedUrl' | 'sync'>;

/** One writer's memory: which of its subscriptions are acknowledged and untouched, and the sync
 * action still waiting for a 200. */
class Writer {
  readonly clientId = randomUUID();
  private readonly settled = new Set<string>();
  private readonly touched = new Set<string>();
  /** Acknowledged sync subscriptions no unsubscribe has been sent for: sync_id → feed URL. */
  private readonly syncSettled = new Map<string, string>();
  private pending: Planned | undefined;
  private settingsWrites = 0;

  constructor(private readonly feedOf: (label: string) => string) {}

  next(kind: Write['kind']): Planned {
    if (this.pending !== undefined) return this.pending;
    const candidates = [...this.settled].filter((g) => !this.touched.has(g));
    if (kind === 'unsubscribe' && candidates.length > 0) return { kind, guid: candidates[0]!, feedUrl: '' };
    const [syncId, subscribedUrl] = [...this.syncSettled][0] ?? [];
    if (kind === 'sync-unsubscribe' && syncId !== undefined) {
      this.syncSettled.delete(syncId);
      const action = syncAction('unsubscribe', { sync_id: syncId }, new Date());
      return { kind, guid: '', feedUrl: subscribedUrl!, sync: { action, feedUrl: subscribedUrl! } };
    }
    if (kind === 'gpodder-settings' && this.settingsWrites < MAX_SETTINGS_WRITES) {
      this.settingsWrites += 1;
      return { kind, guid: guid(), feedUrl: '' };
    }
    if (kind === 'sync-subscribe' || kind === 'sync-unsubscribe') {
      const feedUrl = this.feedOf('drill-sync');
      const action = syncAction('subscribe', { feed_url: feedUrl }, new Date());
      return { kind: 'sync-subscribe', guid: '', feedUrl, sync: { action, feedUrl } };
    }
    return { kind: kind === 'gpodder-add' ? kind : 'add', guid: guid(), feedUrl: this.feedOf('drill') };
  }

  answered(write: Write): void {
    const acknowledged = write.status === 200;
    if (write.sync !== undefined) {
      const { kind, guid: subscriptionGuid, feedUrl, sync } = write;
      this.pending = acknowledged
        ? undefined
        : { kind, guid: subscriptionGuid, feedUrl, sync: { action: sync.action, feedUrl: sync.feedUrl } };
      if (acknowledged && write.kind === 'sync-subscribe' && write.sync.syncId !== undefined)
        this.syncSettled.set(write.sync.syncId, write.feedUrl);
    } else if (write.kind === 'add' && acknowledged) this.settled.add(write.guid);
    else this.touched.add(write.guid);
  }
}

async function send(
  api: ApiClient,
  requestId: string,
  write: Planned,
  userName: string,
  clientId: string,
): Promise<{ status: number | 'cut'; sync?: Pick<SyncWrite, 'status' | 'syncId'> }> {
  const headers = { 'x-request-id': requestId };
  const request = () => {
    switch (write.kind) {
      case 'unsubscribe':
        return api.request('PATCH', `/v1/subscriptions/${write.guid}`, {
          body: { is_subscribed: false },
          headers,
        });
      case 'gpodder-add':
        return api.post(
          `/api/2/subscriptions/${encodeURIComponent(userName)}/drill.json`,
          { add: [write.feedUrl], remove: [] },
          headers,
        );
      case 'sync-subscribe':
      case 'sync-unsubscribe':
        return api.post(
          '/api/v1/sync',
          { requests: [write.sync!.action] },
          { ...headers, 'client-id': clientId },
        );
      case 'gpodder-settings':
        return api.post(
          `/api/2/settings/${encodeURIComponent(userName)}/account.json`,
          { set: { [settingKey(write.guid)]: requestId } },
          headers,
        );
      case 'add':
        return api.post(
          '/v1/subscriptions',
          { subscriptions: [{ feed_url: write.feedUrl, guid: write.guid }] },
          headers,
        );
    }
  };
  try {
    const response = await Promise.race([
      request(),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('no answer in time')), REQUEST_TIMEOUT_MS).unref(),
      ),
    ]);
    const result =
      write.sync !== undefined && response.status === 200 ? response.body?.results?.[0] : undefined;
    return {
      status: response.status,
      ...(result === undefined ? {} : { sync: { status: result.status, syncId: result.data?.sync_id } }),
    };
  } catch {
    return { status: 'cut' };
  }
}

/** The account setting a `gpodder-settings` write sets (to its request id). */
export const settingKey = (writeGuid: string): string => `drill-${writeGuid}`;
