import { normalizeFeedUrl } from '@castlog/domain';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';

/** A subscription of `userId` created with `feedUrl` in the read model's `castlog` schema, as the
 * projector writes one (`deleted` at that instant when given). Answers its id. */
export async function insertSubscription(
  dataSource: DataSource,
  userId: string,
  feedUrl: string,
  { deleted, at = 1_700_000_000_000 }: { deleted?: number; at?: number } = {},
): Promise<string> {
  const id = randomUUID();
  await dataSource.query(
    `INSERT INTO castlog.subscriptions (user_id, id, feed_url, is_subscribed, subscription_changed, guid_changed,
                                        deleted, merged_into, deletion_id, latest_guid, created, created_feed_url,
                                        sync_id, subscribed_at, state_time, identity_time, last_updated, sync_cursor)
     VALUES ($1, $2, $3, true, $4, NULL, $5, NULL, NULL, $2, $4, $6, gen_random_uuid(), 0, 0, 0, 0, 0)`,
    [userId, id, feedUrl, at, deleted ?? null, normalizeFeedUrl(feedUrl)],
  );
  return id;
}
