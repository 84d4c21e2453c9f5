import { SyncActionsPosted, syncIdOf } from '@castlog/domain';
import { envelopeOf } from '@castlog/event-log';
import { randomUUID } from 'node:crypto';
import { CastlogUnderTest, TestUser } from './start-castlog';

/** An `occurred_at` a second from now: later than every change castlog applied before (whose
 * instants may run a little ahead of the clock), and within the hour ahead that castlog accepts. */
export const soon = (): string => new Date(Date.now() + 1000).toISOString();

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
