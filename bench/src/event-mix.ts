import { LOG_EVENT_VERSION, LogEvent } from '@castlog/domain';
import { EventEnvelope } from '@castlog/event-log';
import { seededRandom } from '../../test/support/seeded-random';

const HEX = '0123456789abcdef';

interface UserMix {
  readonly id: string;
  /** The last guids and feed urls this user added (a bounded window), for PATCH, DELETE and re-adds. */
  readonly guids: string[];
  readonly urls: string[];
  feeds: number;
}

const WINDOW = 32;

/** The event mix of the catch-up and replay scenarios: POSTs of 1–5 items (one item in ten re-adds
 * a feed the user already has), PATCHes (is_subscribed, new feed_url, new guid) and DELETEs, over
 * many users, in the proportions 85 / 10 / 5. Deterministic for a given seed. */
export class EventMix {
  private readonly random: () => number;
  private readonly users: UserMix[];
  private sequence = 0;
  readonly counts = { add: 0, items: 0, patch: 0, delete: 0 };

  constructor(userCount: number, seed = 42) {
    this.random = seededRandom(seed);
    this.users = Array.from({ length: userCount }, () => ({
      id: this.uuid(),
      guids: [],
      urls: [],
      feeds: 0,
    }));
  }

  private uuid(): string {
    let text = '';
    for (let i = 0; i < 32; i += 1) {
      let digit = Math.floor(this.random() * 16);
      if (i === 12) digit = 4;
      if (i === 16) digit = 8 + (digit & 3);
      text += HEX[digit];
      if (i === 7 || i === 11 || i === 15 || i === 19) text += '-';
    }
    return text;
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)] as T;
  }

  private remember(list: string[], value: string): void {
    list.push(value);
    if (list.length > WINDOW) list.shift();
  }

  private event(user: UserMix): LogEvent {
    const roll = this.random();
    if (user.guids.length === 0 || roll < 0.85) {
      const count = 1 + Math.floor(this.random() * 5);
      const items = Array.from({ length: count }, () => {
        const candidateGuid = this.uuid();
        if (user.urls.length > 0 && this.random() < 0.1)
          return { feedUrl: this.pick(user.urls), candidateGuid };
        const feedUrl = `https://feeds.bench.example/${user.id.slice(0, 8)}/${(user.feeds += 1)}.xml`;
        this.remember(user.urls, feedUrl);
        this.remember(user.guids, candidateGuid);
        return { feedUrl, candidateGuid };
      });
      this.counts.add += 1;
      this.counts.items += items.length;
      return { type: 'SubscriptionsAddRequested', userId: user.id, items };
    }
    const guid = this.pick(user.guids);
    if (roll < 0.95) {
      this.counts.patch += 1;
      const kind = this.random();
      if (kind < 0.5)
        return {
          type: 'SubscriptionUpdateRequested',
          userId: user.id,
          guid,
          isSubscribed: this.random() < 0.5,
        };
      if (kind < 0.8) {
        const newFeedUrl = `https://feeds.bench.example/${user.id.slice(0, 8)}/${(user.feeds += 1)}.xml`;
        this.remember(user.urls, newFeedUrl);
        return { type: 'SubscriptionUpdateRequested', userId: user.id, guid, newFeedUrl };
      }
      const newGuid = this.uuid();
      this.remember(user.guids, newGuid);
      return { type: 'SubscriptionUpdateRequested', userId: user.id, guid, newGuid };
    }
    this.counts.delete += 1;
    user.guids.splice(user.guids.indexOf(guid), 1);
    return { type: 'DeletionRequested', userId: user.id, guid };
  }

  /** The next `count` envelopes, each for a user drawn at random. */
  next(count: number): EventEnvelope[] {
    return Array.from({ length: count }, () => {
      const value = this.event(this.pick(this.users));
      this.sequence += 1;
      return {
        key: value.userId,
        type: value.type,
        version: LOG_EVENT_VERSION,
        eventId: this.uuid(),
        requestId: `bench-${this.sequence}`,
        value,
      };
    });
  }
}
