import { randomUUID } from 'node:crypto';
import { ApiClient } from '../support/api-client';
import { feed, guid } from '../support/contract';

export interface LoadUser {
  readonly id: string;
  readonly name: string;
  readonly token: string;
}

/** One write as its client saw it: the status answered, or `cut` when the connection failed or
 * no answer came in time. Every request carries its own request id, which its event keeps. */
export interface Write {
  readonly user: LoadUser;
  /** `gpodder-add`: the feed added through the gpodder.net face's upload (no guid of the client's). */
  readonly kind: 'add' | 'unsubscribe' | 'gpodder-add';
  readonly requestId: string;
  readonly guid: string;
  readonly feedUrl: string;
  /** The API process it was sent to. */
  readonly target: string;
  readonly status: number | 'cut';
  readonly at: number;
}

const REQUEST_TIMEOUT_MS = 20_000;

/** Concurrent writers, one per user, each sending one request at a time to the API processes that
 * `targets` names (round robin): mostly new subscriptions (each with its own feed URL and guid),
 * every fourth one through the gpodder.net face's upload, and sometimes an unsubscribe of one of
 * its own acknowledged `/v1` subscriptions that no unanswered request has touched. Everything is
 * recorded. */
export class Load {
  readonly writes: Write[] = [];
  private running = false;
  private writers: Promise<void>[] = [];

  constructor(
    private readonly users: readonly LoadUser[],
    private readonly targets: () => readonly string[],
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
    const settled = new Set<string>();
    const touched = new Set<string>();
    for (let round = index; this.running; round += 1) {
      const targets = this.targets();
      const target = targets[round % targets.length]!;
      const api = new ApiClient(target, `Bearer ${user.token}`);
      const candidates = [...settled].filter((g) => !touched.has(g));
      const kind =
        round % 4 === 3 && candidates.length > 0 ? 'unsubscribe' : round % 4 === 1 ? 'gpodder-add' : 'add';
      const unsubscribe = kind === 'unsubscribe';
      const requestId = randomUUID();
      const [g, feedUrl] = unsubscribe ? [candidates[0]!, ''] : [guid(), feed('drill')];
      const status = await send(api, requestId, kind, user.name, g, feedUrl);
      this.writes.push({
        user,
        kind,
        requestId,
        guid: g,
        feedUrl,
        target,
        status,
        at: Date.now(),
      });
      if (kind === 'add' && status === 200) settled.add(g);
      else touched.add(g);
      // A refused request is retried by a real client after Retry-After; here the next one goes
      // out at once, so the outage is seen by many requests.
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

async function send(
  api: ApiClient,
  requestId: string,
  kind: Write['kind'],
  userName: string,
  subscriptionGuid: string,
  feedUrl: string,
): Promise<number | 'cut'> {
  const headers = { 'x-request-id': requestId };
  const request = () => {
    switch (kind) {
      case 'unsubscribe':
        return api.request('PATCH', `/v1/subscriptions/${subscriptionGuid}`, {
          body: { is_subscribed: false },
          headers,
        });
      case 'gpodder-add':
        return api.post(
          `/api/2/subscriptions/${encodeURIComponent(userName)}/drill.json`,
          { add: [feedUrl], remove: [] },
          headers,
        );
      case 'add':
        return api.post(
          '/v1/subscriptions',
          { subscriptions: [{ feed_url: feedUrl, guid: subscriptionGuid }] },
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
    return response.status;
  } catch {
    return 'cut';
  }
}
