import { AccessTokenResponse, IssuedLogin } from '@castlog/auth';
import { microsOf, SyncEntity, SyncResult, SyncStatus, toIsoMicros } from '@castlog/domain';
import { SyncChange } from '@castlog/read-model';

// The sync draft's answers (their schemas: ./sync-draft.openapi). Its times are UTC with six
// fraction digits and `Z` (`toIsoMicros`): `occurred_at` keeps microseconds.

/** The draft's `PersistedSubscription`: `unsubscribed_at` only once unsubscribed. */
export interface EntityBody {
  readonly sync_id: string;
  readonly guid: string;
  readonly feed_url: string;
  readonly subscribed_at: string;
  readonly unsubscribed_at?: string;
}

export interface ActionResultBody {
  readonly type: string;
  readonly action: string;
  readonly action_id: string;
  readonly status: SyncStatus;
  readonly reason?: string;
  readonly data: unknown;
}

export interface SyncResultsBody {
  readonly results: readonly ActionResultBody[];
}

export interface ChangeBody {
  readonly type: 'subscription';
  readonly last_updated: string;
  readonly data: EntityBody;
}

export interface SyncPageBody {
  readonly results: readonly ChangeBody[];
  readonly has_more: boolean;
  readonly has_next: boolean;
  readonly next_since?: string;
  readonly previous_since?: string;
}

export interface SubscriptionsPageBody {
  readonly results: readonly EntityBody[];
  readonly has_next: boolean;
  readonly has_more: boolean;
  readonly next?: string;
}

export interface LoginBody extends AccessTokenResponse {
  readonly refresh_token: string;
  readonly refresh_expires: string;
  readonly refresh_endpoint: typeof REFRESH_ENDPOINT;
}

export const presentEntity = (entity: SyncEntity): EntityBody => ({
  sync_id: entity.syncId,
  guid: entity.guid,
  feed_url: entity.feedUrl,
  subscribed_at: toIsoMicros(entity.subscribedAt),
  ...(entity.unsubscribedAt === null ? {} : { unsubscribed_at: toIsoMicros(entity.unsubscribedAt) }),
});

/** One result per action, in request order, always with `data` (the draft's sync page; its
 * unsubscribe page says `entity`): the entity as the action left it, or the data as sent when the
 * action reached none. */
export const presentResults = (results: readonly SyncResult[]): SyncResultsBody => ({
  results: results.map((result) => ({
    type: result.type,
    action: result.action,
    action_id: result.actionId,
    status: result.status,
    ...(result.reason === undefined ? {} : { reason: result.reason }),
    data: result.entity === undefined ? (result.sentData ?? {}) : presentEntity(result.entity),
  })),
});

export const presentChange = (change: SyncChange): ChangeBody => ({
  type: 'subscription',
  last_updated: toIsoMicros(change.lastUpdated),
  data: presentEntity(change.entity),
});

/** The endpoint a login names for refreshing its access token. */
export const REFRESH_ENDPOINT = '/auth/refresh';

export const presentLogin = ({ tokens, refreshExpiresAt }: IssuedLogin): LoginBody => ({
  access_token: tokens.access_token,
  expires_in: tokens.expires_in,
  refresh_token: tokens.refresh_token,
  refresh_expires: toIsoMicros(microsOf(refreshExpiresAt.getTime())),
  refresh_endpoint: REFRESH_ENDPOINT,
});
