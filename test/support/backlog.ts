import { LOG_EVENT_VERSION, LogEvent } from '@castlog/domain';
import { EventEnvelope, EventLog } from '@castlog/event-log';
import { randomUUID } from 'node:crypto';

/** Appends `events` one-feed POSTs straight to the log (no projector involved), round-robin over
 * `users` new users with `feedsPerUser` feeds each: fewer feeds than a user's events, so later
 * POSTs match earlier subscriptions. */
export async function appendBacklog(
  eventLog: EventLog,
  { events, users, feedsPerUser }: { events: number; users: number; feedsPerUser: number },
): Promise<void> {
  const userIds = Array.from({ length: users }, () => randomUUID());
  const envelopes: EventEnvelope[] = Array.from({ length: events }, (_, i) => {
    const userId = userIds[i % users]!;
    const value: LogEvent = {
      type: 'SubscriptionsAddRequested',
      userId,
      items: [
        {
          feedUrl: `https://feeds.example.com/${userId}/${(i * 7) % feedsPerUser}/rss`,
          candidateGuid: randomUUID(),
        },
      ],
    };
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
}
