import { randomUUID } from 'node:crypto';
import type { WireEntity } from '../../libs/domain/src/testing/sync-clients';
import { ApiClient, ApiResponse } from './api-client';
import type { CastlogUnderTest, TestUser } from './start-castlog';
import { draftSchemaErrors } from './sync-draft/draft-schema';

/**
 * The Open Podcast API sync draft's face (CONTRACT.md, "The Open Podcast API sync draft") as one
 * client installation sees it: its credentials, its Client-ID, and the routes' paging followed as
 * a client follows it (the `next_since` and `next` URLs the answers carry). Every entity and every
 * action result it reads must match the draft's own schema.
 */

export const SYNC_PATH = '/api/v1/sync';
export const SUBSCRIPTIONS_PATH = '/api/v1/subscriptions';

export type SyncVerb = 'subscribe' | 'unsubscribe' | 'update';

/** An action as the draft's POST carries it. */
export interface SyncAction {
  readonly type: string;
  readonly action: string;
  readonly action_id: string;
  readonly occurred_at: string;
  readonly data: Record<string, unknown>;
}

/** One result of `POST /api/v1/sync`. */
export interface SyncResult {
  readonly type: string;
  readonly action: string;
  readonly action_id: string;
  readonly status: 'applied' | 'ignored' | 'rejected';
  readonly reason?: string;
  readonly data: WireEntity & Record<string, unknown>;
}

/** One result of `GET /api/v1/sync`: an entity's state. */
export interface SyncChange {
  readonly type: string;
  readonly last_updated: string;
  readonly data: WireEntity;
}

/** An action of type `subscription`, with a fresh action_id unless given. */
export const syncAction = (
  action: SyncVerb,
  data: Record<string, unknown>,
  occurredAt: string | Date,
  actionId: string = randomUUID(),
): SyncAction => ({
  type: 'subscription',
  action,
  action_id: actionId,
  occurred_at: typeof occurredAt === 'string' ? occurredAt : occurredAt.toISOString(),
  data,
});

/** `Basic` credentials of the user's name and password. */
export const basicOf = (user: TestUser): string =>
  `Basic ${Buffer.from(`${user.name}:${user.password}`, 'utf8').toString('base64')}`;

/** An access token from the sync draft's own `POST /auth/login`. */
export async function draftLogin(app: CastlogUnderTest, user: TestUser): Promise<Record<string, any>> {
  const response = await app.anonymous.post('/auth/login', { username: user.name, password: user.password });
  if (response.status !== 200) throw new Error(`/auth/login: ${response.status} ${response.text}`);
  return response.body;
}

/** A client installation of the user on `app`, with these credentials (an Authorization header
 * value, Bearer or Basic), and a Client-ID of its own unless given. */
export const syncClientOf = (app: CastlogUnderTest, authorization: string, clientId?: string): SyncClient =>
  new SyncClient(app.anonymous.withAuthorization(authorization), clientId);

/** The query value `since` of a next_since or next URL. */
const sinceOf = (url: string): string | undefined =>
  new URL(url, 'http://placeholder').searchParams.get('since') ?? undefined;

/** Fails unless `value` matches the draft's schema `name`. */
const matchDraft = (name: string, value: unknown, where: string): void => {
  const errors = draftSchemaErrors(name, value);
  if (errors !== undefined) throw new Error(`${where}: not a ${name}: ${errors} in ${JSON.stringify(value)}`);
};

/** No answer pages on forever: a loop of next links is a failure, not a hang. */
const MAX_PAGES = 1_000;

export class SyncClient {
  /** `api` carries the credentials (Bearer or Basic). */
  constructor(
    readonly api: ApiClient,
    readonly clientId: string = randomUUID(),
  ) {}

  private headers(): Record<string, string> {
    return { 'client-id': this.clientId };
  }

  /** `POST /api/v1/sync` with these actions, whatever the answer. */
  postRaw(body: unknown): Promise<ApiResponse> {
    return this.api.post(SYNC_PATH, body, this.headers());
  }

  /** `POST /api/v1/sync`: the results of a 200, else a failure naming the answer. */
  async sync(actions: readonly unknown[]): Promise<SyncResult[]> {
    const response = await this.postRaw({ requests: actions });
    if (response.status !== 200)
      throw new Error(`POST ${SYNC_PATH}: ${response.status} ${response.text.slice(0, 500)}`);
    const results: SyncResult[] = response.body.results;
    // A result that reached an entity is the draft's SubscriptionActionResult; one that reached none
    // (rejected) its SyncActionResult.
    for (const result of results)
      matchDraft(
        result.status === 'rejected' && !('subscribed_at' in result.data)
          ? 'SyncActionResult'
          : 'SubscriptionActionResult',
        result,
        `POST ${SYNC_PATH}`,
      );
    return results;
  }

  get(path: string): Promise<ApiResponse> {
    return this.api.get(path, this.headers());
  }

  /** `GET /api/v1/sync` from `since`, following `next_since` while `has_more`: every result in the
   * order the pages gave them, and the cursor to ask from next time (the last page's next_since, or
   * `since` when nothing came). */
  async changes(
    options: { since?: string; includeOwn?: boolean; limit?: number } = {},
  ): Promise<{ changes: SyncChange[]; since?: string; pages: number }> {
    const query = new URLSearchParams();
    if (options.since !== undefined) query.set('since', options.since);
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    if (options.includeOwn !== undefined) query.set('include_own', String(options.includeOwn));
    let next: string = `${SYNC_PATH}${query.size > 0 ? `?${query}` : ''}`;
    let since = options.since;
    const changes: SyncChange[] = [];
    for (let pages = 1; pages <= MAX_PAGES; pages += 1) {
      const response = await this.get(next);
      if (response.status !== 200)
        throw new Error(`GET ${next}: ${response.status} ${response.text.slice(0, 500)}`);
      for (const change of response.body.results as SyncChange[])
        matchDraft('PersistedSubscription', change.data, `GET ${next}`);
      changes.push(...response.body.results);
      if (typeof response.body.next_since === 'string') since = sinceOf(response.body.next_since);
      else if (response.body.results.length > 0) throw new Error(`GET ${next}: results without next_since`);
      if (!response.body.has_more) return { changes, ...(since === undefined ? {} : { since }), pages };
      next = response.body.next_since;
    }
    throw new Error(`GET ${SYNC_PATH}: more than ${MAX_PAGES} pages`);
  }

  /** `GET /api/v1/subscriptions`, every page through `next`. */
  async subscriptions(
    options: { includeUnsubscribed?: boolean; limit?: number } = {},
  ): Promise<WireEntity[]> {
    const query = new URLSearchParams();
    if (options.includeUnsubscribed !== undefined)
      query.set('include_unsubscribed', String(options.includeUnsubscribed));
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    let next: string = `${SUBSCRIPTIONS_PATH}${query.size > 0 ? `?${query}` : ''}`;
    const entities: WireEntity[] = [];
    for (let pages = 1; pages <= MAX_PAGES; pages += 1) {
      const response = await this.get(next);
      if (response.status !== 200)
        throw new Error(`GET ${next}: ${response.status} ${response.text.slice(0, 500)}`);
      for (const entity of response.body.results) matchDraft('PersistedSubscription', entity, `GET ${next}`);
      entities.push(...response.body.results);
      if (typeof response.body.next !== 'string') return entities;
      next = response.body.next;
    }
    throw new Error(`GET ${SUBSCRIPTIONS_PATH}: more than ${MAX_PAGES} pages`);
  }

  /** `GET /api/v1/subscriptions/{sync_id}`. */
  subscription(syncId: string): Promise<ApiResponse> {
    return this.get(`${SUBSCRIPTIONS_PATH}/${syncId}`);
  }
}
