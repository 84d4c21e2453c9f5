import { SyncEntity, SyncResult } from '@castlog/domain';
import { presentChange, presentEntity, presentLogin, presentResults } from './sync-draft.presenter';

const T = Date.parse('2026-07-11T15:30:00Z') * 1000;
const ENTITY: SyncEntity = {
  syncId: '4648b4d7-90bf-497c-a5e7-8383d1083d76',
  guid: '677ea490-690e-51cb-8b43-755df6c55270',
  feedUrl: 'https://example.com/feed1',
  subscribedAt: T + 100_000,
  unsubscribedAt: null,
};

describe('the sync draft presenters', () => {
  it('show an entity with microsecond UTC times, unsubscribed_at only once unsubscribed', () => {
    expect(presentEntity(ENTITY)).toEqual({
      sync_id: ENTITY.syncId,
      guid: ENTITY.guid,
      feed_url: ENTITY.feedUrl,
      subscribed_at: '2026-07-11T15:30:00.100000Z',
    });
    expect(presentEntity({ ...ENTITY, unsubscribedAt: T + 86_400_000_001 })).toMatchObject({
      unsubscribed_at: '2026-07-12T15:30:00.000001Z',
    });
  });

  it('answer one result per action, with data always and a reason only when the outcome has one', () => {
    const results: SyncResult[] = [
      { type: 'subscription', action: 'subscribe', actionId: 'a', status: 'applied', entity: ENTITY },
      {
        type: 'subscription',
        action: 'unsubscribe',
        actionId: 'b',
        status: 'rejected',
        reason: 'Entity not found',
        sentData: { sync_id: 'x' },
      },
      {
        type: 'susbcription',
        action: 'subscribe',
        actionId: 'c',
        status: 'rejected',
        reason: 'Unknown type',
      },
    ];
    expect(presentResults(results)).toEqual({
      results: [
        {
          type: 'subscription',
          action: 'subscribe',
          action_id: 'a',
          status: 'applied',
          data: presentEntity(ENTITY),
        },
        {
          type: 'subscription',
          action: 'unsubscribe',
          action_id: 'b',
          status: 'rejected',
          reason: 'Entity not found',
          data: { sync_id: 'x' },
        },
        {
          type: 'susbcription',
          action: 'subscribe',
          action_id: 'c',
          status: 'rejected',
          reason: 'Unknown type',
          data: {},
        },
      ],
    });
  });

  it('show a change as its entity with last_updated', () => {
    expect(presentChange({ entity: ENTITY, lastUpdated: T, cursor: T + 5 })).toEqual({
      type: 'subscription',
      last_updated: '2026-07-11T15:30:00.000000Z',
      data: presentEntity(ENTITY),
    });
  });

  it('answer a login with the refresh token expiry and endpoint', () => {
    const tokens = {
      access_token: 'cl_a',
      token_type: 'Bearer' as const,
      expires_in: 3600,
      refresh_token: 'cl_r',
    };
    expect(presentLogin({ tokens, refreshExpiresAt: new Date('2026-08-10T15:30:00.250Z') })).toEqual({
      access_token: 'cl_a',
      expires_in: 3600,
      refresh_token: 'cl_r',
      refresh_expires: '2026-08-10T15:30:00.250000Z',
      refresh_endpoint: '/auth/refresh',
    });
  });
});
