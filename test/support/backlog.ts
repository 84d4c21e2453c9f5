import { LOG_EVENT_VERSION, LogEvent } from '@castlog/domain';
import { EventEnvelope, EventLog } from '@castlog/event-log';
import { randomUUID } from 'node:crypto';

/** Appends `events` one-feed POSTs straight to the log (no projector involved), round-robin over
 * `users` new users with `feedsPerUser` feeds each: fewer feeds than a user's events, so later
 * POSTs match earlier subscriptions. With `deleteEvery` N, every Nth event of each user is instead a
 * DELETE of a subscription the user added before. Answers how many DELETEs it appended. */
export async function appendBacklog(
  eventLog: EventLog,
  {
    events,
    users,
    feedsPerUser,
    deleteEvery,
  }: { events: number; users: number; feedsPerUser: number; deleteEvery?: number },
): Promise<{ deletions: number }> {
  const userIds = Array.from({ length: users }, () => randomUUID());
  /** Per user, the guid each feed was first added with. */
  const guids = new Map<string, Map<number, string>>(userIds.map((id) => [id, new Map()]));
  let deletions = 0;
  const envelopes: EventEnvelope[] = Array.from({ length: events }, (_, i) => {
    const userId = userIds[i % users]!;
    /** The user's own count of events so far. */
    const nth = Math.floor(i / users);
    const added = guids.get(userId)!;
    const feed = (nth * 7) % feedsPerUser;
    let value: LogEvent;
    if (deleteEvery !== undefined && nth % deleteEvery === deleteEvery - 1 && added.size > 0) {
      value = { type: 'DeletionRequested', userId, guid: [...added.values()][(nth * 3) % added.size]! };
      deletions += 1;
    } else {
      const candidateGuid = randomUUID();
      if (!added.has(feed)) added.set(feed, candidateGuid);
      value = {
        type: 'SubscriptionsAddRequested',
        userId,
        items: [{ feedUrl: `https://feeds.example.com/${userId}/${feed}/rss`, candidateGuid }],
      };
    }
    return {
      key: userId,
      type: value.type,
      version: LOG_EVENT_VERSION,
      eventId: randomUUID(),
      requestId: `bulk-${i}`,
      value,
    };
  });
  for (let start = 0; start < events; start += 5000)
    await eventLog.append(envelopes.slice(start, start + 5000));
  return { deletions };
}
