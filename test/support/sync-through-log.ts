import { syncIdOf, SyncActionsPosted } from '@castlog/domain';
import { envelopeOf } from '@castlog/event-log';
import { randomUUID } from 'node:crypto';
import { CastlogUnderTest, TestUser } from './start-castlog';

/** One sync action as a client sends it; unless told, it occurred a second from now, so that it is
 * later than every change castlog applied before (whose instants may run a little ahead of the
 * clock) and within the hour ahead that castlog accepts. */
export const syncAction = (
  action: 'subscribe' | 'unsubscribe' | 'update',
  data: Record<string, unknown>,
  fields: Record<string, unknown> = {},
): Record<string, unknown> => ({
  type: 'subscription',
  action,
  action_id: randomUUID(),
  occurred_at: new Date(Date.now() + 1000).toISOString(),
  data,
  ...fields,
});

/** The sync_id of the user's subscription `id` (its first guid). */
export const syncIdOfUser = (user: TestUser, id: string): string => syncIdOf(user.id, id);

/** A sync request appended to the app's log as the API appends one (`POST /api/v1/sync`), applied by
 * its projection before this answers: the log and the projection, without the HTTP face. */
export async function syncThroughLog(
  app: CastlogUnderTest,
  user: TestUser,
  actions: readonly unknown[],
  clientId: string = randomUUID(),
): Promise<SyncActionsPosted> {
  const event: SyncActionsPosted = { type: 'SyncActionsPosted', userId: user.id, clientId, actions };
  await app.runtime.eventLog.append([envelopeOf(event, `sync-${randomUUID()}`)]);
  await app.untilProjectionAtEnd();
  return event;
}
