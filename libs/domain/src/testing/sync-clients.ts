import fc from 'fast-check';
import { podcastGuidOf } from '../sync/ids';
import { normalizeFeedUrl } from '../subscriptions/feed-url';
import { Micros, parseRfc3339Micros, toIsoMicros } from '../time';

// Clients of the sync draft as the convergence property drives them: each with its own clock, a
// queue of actions made offline, and its view of the user's subscriptions, built from the answers
// it got. The transport is the real service over HTTP, or the decider alone.

/** A subscription as the sync face writes it (the draft's JSON). */
export interface WireEntity {
  readonly sync_id: string;
  readonly guid: string;
  readonly feed_url: string;
  readonly subscribed_at: string;
  readonly unsubscribed_at?: string;
}

export interface WireResult {
  readonly action_id: string;
  readonly status: string;
  readonly data: WireEntity | Record<string, unknown>;
}

export interface SyncTransport {
  /** `POST /api/v1/sync` with these actions (at most 30) from `clientId`: the results. */
  post(clientId: string, actions: readonly WireAction[]): Promise<readonly WireResult[]>;
  /** `GET /api/v1/sync?since=…` from `clientId`, every page: the entities in cursor order, and the
   * cursor to ask from next time (unchanged when nothing came). */
  pull(clientId: string, since: string | undefined): Promise<{ entities: WireEntity[]; since?: string }>;
}

export interface WireAction {
  readonly type: 'subscription';
  readonly action: 'subscribe' | 'unsubscribe' | 'update';
  readonly action_id: string;
  readonly occurred_at: string;
  readonly data: Record<string, unknown>;
}

/** The few feeds the clients act on, each subscribed by its URL and its podcast guid. */
export const FEEDS = ['https://one.example/rss', 'https://two.example/rss', 'https://three.example/rss'].map(
  (url) => ({ url, guid: podcastGuidOf(normalizeFeedUrl(url)) }),
);

export type Step =
  | {
      readonly kind: 'act';
      readonly client: number;
      readonly feed: number;
      readonly verb: WireAction['action'];
    }
  /** Uploads the client's queue; with `lose`, the first answer is lost and the same actions are sent again. */
  | { readonly kind: 'upload'; readonly client: number; readonly lose: boolean }
  | { readonly kind: 'pull'; readonly client: number }
  /** Time passes: `ms` milliseconds of true time. */
  | { readonly kind: 'wait'; readonly ms: number };

export interface Scenario {
  /** Each client's clock minus true time, in whole milliseconds. */
  readonly skews: readonly number[];
  readonly steps: readonly Step[];
}

/** Three clients whose clocks are up to 20 minutes off, and what they do, in true-time order. */
export const scenarioArbitrary = (maxSteps = 40): fc.Arbitrary<Scenario> =>
  fc.record({
    skews: fc.array(fc.integer({ min: -1_200_000, max: 1_200_000 }), { minLength: 3, maxLength: 3 }),
    steps: fc.array(
      fc.oneof(
        {
          weight: 6,
          arbitrary: fc.record({
            kind: fc.constant('act' as const),
            client: fc.nat(2),
            feed: fc.nat(FEEDS.length - 1),
            verb: fc.constantFrom('subscribe' as const, 'unsubscribe' as const, 'update' as const),
          }),
        },
        {
          weight: 2,
          arbitrary: fc.record({
            kind: fc.constant('upload' as const),
            client: fc.nat(2),
            lose: fc.boolean(),
          }),
        },
        { weight: 2, arbitrary: fc.record({ kind: fc.constant('pull' as const), client: fc.nat(2) }) },
        {
          weight: 2,
          arbitrary: fc.record({
            kind: fc.constant('wait' as const),
            ms: fc.integer({ min: 1, max: 600_000 }),
          }),
        },
      ),
      { minLength: Math.min(10, maxSteps), maxLength: maxSteps, size: 'max' },
    ),
  });

/** An action as the server received it, for the expected fold. */
export interface Delivered {
  readonly feed: number;
  readonly verb: WireAction['action'];
  readonly occurredAt: Micros;
  readonly feedUrl?: string;
}

class Client {
  readonly queue: { action: WireAction; feed: number }[] = [];
  readonly view = new Map<string, WireEntity>();
  since: string | undefined;

  constructor(
    readonly id: string,
    readonly skew: number,
  ) {}

  syncIdOf(feed: number): string | undefined {
    for (const entity of this.view.values()) if (entity.guid === FEEDS[feed]?.guid) return entity.sync_id;
    return undefined;
  }

  learn(entity: WireEntity): void {
    this.view.set(entity.sync_id, entity);
  }
}

const isEntity = (data: WireResult['data']): data is WireEntity => typeof data.sync_id === 'string';

/** Runs `scenario` against `transport`, then has every client upload and pull until nothing is
 * left: answers each client's view, and the actions in the order the server first judged them.
 * `now` is true time in milliseconds, which `wait` steps advance; `onWait` lets the transport follow. */
export async function runScenario(
  scenario: Scenario,
  transport: SyncTransport,
  clock: { now: number; advance?: (ms: number) => void },
  ids: { client: (n: number) => string; action: () => string },
): Promise<{ views: Map<string, WireEntity>[]; delivered: Delivered[] }> {
  const clients = scenario.skews.map((skew, n) => new Client(ids.client(n), skew));
  const delivered: Delivered[] = [];
  const seen = new Set<string>();
  let sequence = 0;
  const micros = (text: string): Micros => parseRfc3339Micros(text) ?? Number.NaN;
  const act = (client: Client, feed: number, verb: WireAction['action']): void => {
    const syncId = client.syncIdOf(feed);
    if (verb !== 'subscribe' && syncId === undefined) return;
    // Distinct client times: the client's clock in milliseconds, and a sequence in the microseconds.
    const occurredAt = (clock.now + client.skew) * 1000 + (sequence++ % 1000);
    const target = FEEDS[feed] as { url: string; guid: string };
    const data =
      verb === 'subscribe'
        ? { feed_url: target.url, guid: target.guid }
        : verb === 'unsubscribe'
          ? { sync_id: syncId }
          : { sync_id: syncId, feed_url: `${target.url}?v=${ids.action()}` };
    client.queue.push({
      feed,
      action: {
        type: 'subscription',
        action: verb,
        action_id: ids.action(),
        occurred_at: toIsoMicros(occurredAt),
        data,
      },
    });
  };
  const upload = async (client: Client, lose: boolean): Promise<void> => {
    while (client.queue.length > 0) {
      const chunk = client.queue.slice(0, 30);
      if (lose)
        await transport.post(
          client.id,
          chunk.map((q) => q.action),
        );
      const results = await transport.post(
        client.id,
        chunk.map((q) => q.action),
      );
      // What the server judged first, in the order it applies a request: by occurred_at.
      const fresh = chunk.filter((q) => !seen.has(q.action.action_id));
      for (const q of [...fresh].sort(
        (a, b) => micros(a.action.occurred_at) - micros(b.action.occurred_at),
      )) {
        seen.add(q.action.action_id);
        const feedUrl = q.action.data.feed_url;
        delivered.push({
          feed: q.feed,
          verb: q.action.action,
          occurredAt: micros(q.action.occurred_at),
          ...(typeof feedUrl === 'string' ? { feedUrl } : {}),
        });
      }
      for (const result of results) if (isEntity(result.data)) client.learn(result.data);
      client.queue.splice(0, chunk.length);
    }
  };
  const pull = async (client: Client): Promise<void> => {
    const { entities, since } = await transport.pull(client.id, client.since);
    for (const entity of entities) client.learn(entity);
    if (since !== undefined) client.since = since;
  };
  for (const step of scenario.steps) {
    if (step.kind === 'wait') {
      clock.now += step.ms;
      clock.advance?.(step.ms);
    } else if (step.kind === 'act') act(clients[step.client] as Client, step.feed, step.verb);
    else if (step.kind === 'upload') await upload(clients[step.client] as Client, step.lose);
    else await pull(clients[step.client] as Client);
  }
  for (const client of clients) await upload(client, false);
  for (const client of clients) await pull(client);
  return { views: clients.map((client) => client.view), delivered };
}

/** What last-write-wins makes of the delivered actions, per feed that has an entity: subscribed by
 * its latest subscribe or unsubscribe, with the feed_url of its latest update or of the subscribe
 * that created it, whichever occurred last. */
export const expectedFold = (
  delivered: readonly Delivered[],
): Map<string, { subscribed: boolean; feedUrl: string }> => {
  const expected = new Map<string, { subscribed: boolean; feedUrl: string }>();
  FEEDS.forEach((feed, index) => {
    const mine = delivered.filter((d) => d.feed === index);
    const creation = mine.find((d) => d.verb === 'subscribe');
    if (creation === undefined) return;
    const latest = (verbs: readonly string[]): Delivered =>
      mine
        .filter((d) => verbs.includes(d.verb))
        .reduce((best, d) => (d.occurredAt > best.occurredAt ? d : best), creation);
    const identity = mine
      .filter((d) => d.verb === 'update')
      .reduce((best, d) => (d.occurredAt > best.occurredAt ? d : best), creation);
    expected.set(feed.guid, {
      subscribed: latest(['subscribe', 'unsubscribe']).verb === 'subscribe',
      feedUrl: identity.feedUrl ?? feed.url,
    });
  });
  return expected;
};
