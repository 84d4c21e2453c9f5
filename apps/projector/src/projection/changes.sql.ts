import { Change, Deletion, RequestOutcome, Subscription } from '@castlog/domain';
import { quoteIdent, Sql } from '@castlog/read-model';

export interface OutcomeRow {
  readonly partition: number;
  readonly offset: number;
  readonly userId: string;
  readonly eventId: string;
  readonly requestId: string;
  readonly eventType: string;
  readonly instant: number;
  readonly outcome: RequestOutcome;
}

/** Writes a batch's changes with one set-based statement per kind. Rows are whole, so only the
 * last row of each key in the batch is written. */
export async function writeChanges(sql: Sql, schema: string, changes: readonly Change[]): Promise<void> {
  const s = quoteIdent(schema);
  const subscriptions = new Map<string, Subscription>();
  const feedUrls = new Map<string, { userId: string; url: string; subscriptionId: string }>();
  const deletions = new Map<number, Deletion>();
  const clocks = new Map<string, number>();
  for (const change of changes) {
    switch (change.kind) {
      case 'SubscriptionSaved':
        subscriptions.set(
          `${change.subscription.userId}\u0000${change.subscription.id}`,
          change.subscription,
        );
        break;
      case 'GuidRecorded':
        // Written from the saved subscription's chain below, with its position.
        break;
      case 'FeedUrlRecorded':
        feedUrls.set(`${change.userId}\u0000${change.normalizedFeedUrl}`, {
          userId: change.userId,
          url: change.normalizedFeedUrl,
          subscriptionId: change.subscriptionId,
        });
        break;
      case 'DeletionSaved':
        deletions.set(change.deletion.deletionId, change.deletion);
        break;
      case 'ClockAdvanced':
        clocks.set(change.userId, Math.max(clocks.get(change.userId) ?? 0, change.lastInstant));
        break;
      default: {
        const never: never = change;
        throw new Error(`unknown change ${JSON.stringify(never)}`);
      }
    }
  }

  const subs = [...subscriptions.values()];
  if (subs.length > 0) {
    await sql.query(
      `INSERT INTO ${s}.subscriptions (user_id, id, feed_url, is_subscribed, subscription_changed, guid_changed,
                                       deleted, merged_into, deletion_id, latest_guid)
       SELECT * FROM unnest($1::text[], $2::uuid[], $3::text[], $4::boolean[], $5::bigint[], $6::bigint[],
                            $7::bigint[], $8::uuid[], $9::bigint[], $10::uuid[])
       ON CONFLICT (user_id, id) DO UPDATE SET
         feed_url = EXCLUDED.feed_url, is_subscribed = EXCLUDED.is_subscribed,
         subscription_changed = EXCLUDED.subscription_changed, guid_changed = EXCLUDED.guid_changed,
         deleted = EXCLUDED.deleted, merged_into = EXCLUDED.merged_into, deletion_id = EXCLUDED.deletion_id,
         latest_guid = EXCLUDED.latest_guid`,
      [
        subs.map((x) => x.userId),
        subs.map((x) => x.id),
        subs.map((x) => x.feedUrl),
        subs.map((x) => x.isSubscribed),
        subs.map((x) => x.subscriptionChanged),
        subs.map((x) => x.guidChanged),
        subs.map((x) => x.deleted),
        subs.map((x) => x.mergedInto),
        subs.map((x) => x.deletionId),
        subs.map((x) => x.guids[x.guids.length - 1]?.guid ?? x.id),
      ],
    );
    const guids = subs.flatMap((x) => x.guids.map((entry, position) => ({ sub: x, entry, position })));
    await sql.query(
      `INSERT INTO ${s}.subscription_guids (user_id, guid, subscription_id, since, position)
       SELECT * FROM unnest($1::text[], $2::uuid[], $3::uuid[], $4::bigint[], $5::int[])
       ON CONFLICT (user_id, guid) DO NOTHING`,
      [
        guids.map((g) => g.sub.userId),
        guids.map((g) => g.entry.guid),
        guids.map((g) => g.sub.id),
        guids.map((g) => g.entry.since),
        guids.map((g) => g.position),
      ],
    );
  }

  const urls = [...feedUrls.values()];
  if (urls.length > 0) {
    await sql.query(
      `INSERT INTO ${s}.subscription_feed_urls (user_id, normalized_feed_url, subscription_id)
       SELECT * FROM unnest($1::text[], $2::text[], $3::uuid[])
       ON CONFLICT (user_id, normalized_feed_url) DO UPDATE SET subscription_id = EXCLUDED.subscription_id`,
      [urls.map((u) => u.userId), urls.map((u) => u.url), urls.map((u) => u.subscriptionId)],
    );
  }

  const dels = [...deletions.values()];
  if (dels.length > 0) {
    await sql.query(
      `INSERT INTO ${s}.deletions (deletion_id, user_id, subscription_id, status, requested_at, finished_at)
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::uuid[], $4::text[], $5::bigint[], $6::bigint[])
       ON CONFLICT (deletion_id) DO UPDATE SET status = EXCLUDED.status, finished_at = EXCLUDED.finished_at`,
      [
        dels.map((d) => d.deletionId),
        dels.map((d) => d.userId),
        dels.map((d) => d.subscriptionId),
        dels.map((d) => d.status),
        dels.map((d) => d.requestedAt),
        dels.map((d) => d.finishedAt),
      ],
    );
  }

  if (clocks.size > 0) {
    await sql.query(
      `INSERT INTO ${s}.user_clocks (user_id, last_instant)
       SELECT * FROM unnest($1::text[], $2::bigint[])
       ON CONFLICT (user_id) DO UPDATE SET last_instant = greatest(${s}.user_clocks.last_instant, EXCLUDED.last_instant)`,
      [[...clocks.keys()], [...clocks.values()]],
    );
  }
}

export async function writeOutcomes(
  sql: Sql,
  schema: string,
  outcomes: readonly OutcomeRow[],
): Promise<void> {
  if (outcomes.length === 0) return;
  await sql.query(
    `INSERT INTO ${quoteIdent(schema)}.request_outcomes
       (partition, "offset", user_id, event_id, request_id, event_type, instant, outcome)
     SELECT * FROM unnest($1::int[], $2::bigint[], $3::text[], $4::uuid[], $5::text[], $6::text[], $7::bigint[], $8::jsonb[])
     ON CONFLICT (partition, "offset") DO NOTHING`,
    [
      outcomes.map((o) => o.partition),
      outcomes.map((o) => o.offset),
      outcomes.map((o) => o.userId),
      outcomes.map((o) => o.eventId),
      outcomes.map((o) => o.requestId),
      outcomes.map((o) => o.eventType),
      outcomes.map((o) => o.instant),
      outcomes.map((o) => JSON.stringify(o.outcome)),
    ],
  );
}
