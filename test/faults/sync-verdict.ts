import { parseRfc3339Micros } from '@castlog/domain';
import type { WireEntity } from '../../libs/domain/src/testing/sync-clients';
import { ApiClient } from '../support/api-client';
import { SyncAction, SyncClient } from '../support/sync-face';
import { LoadUser, Write } from './load';

/**
 * What the sync face's writes of a fault drill (test/faults/load.ts) must have left: each action
 * that a 200 acknowledged applied once, as answered (`applied`, and the subscription's
 * subscribed_at or unsubscribed_at its occurred_at), each other one at most once; and sent again
 * once the faults are over, every acknowledged action answers its first status and changes nothing.
 */

/** One action and every attempt to send it. */
interface SentAction {
  readonly user: LoadUser;
  readonly kind: Write['kind'];
  readonly action: SyncAction;
  readonly feedUrl: string;
  readonly attempts: Write[];
  /** The attempt a 200 answered, if one did. */
  readonly acknowledged?: Write;
}

/** The drill's sync actions, each with its attempts in the order they were sent. */
export function syncActionsOf(writes: readonly Write[]): SentAction[] {
  const byId = new Map<string, Write[]>();
  for (const write of writes) {
    if (write.sync === undefined) continue;
    const id = `${write.user.id} ${write.sync.action.action_id}`;
    byId.set(id, [...(byId.get(id) ?? []), write]);
  }
  return [...byId.values()].map((attempts) => {
    const [first] = attempts as [Write, ...Write[]];
    const acknowledged = attempts.find((attempt) => attempt.status === 200);
    return {
      user: first.user,
      kind: first.kind,
      action: first.sync!.action,
      feedUrl: first.feedUrl,
      attempts,
      ...(acknowledged === undefined ? {} : { acknowledged }),
    };
  });
}

/** Every subscription of `user` on the sync face, through the API process at `url`, by feed URL. */
export async function syncEntitiesOf(url: string, user: LoadUser): Promise<Map<string, WireEntity[]>> {
  const client = new SyncClient(new ApiClient(url, `Bearer ${user.token}`));
  const byFeed = new Map<string, WireEntity[]>();
  for (const entity of await client.subscriptions({ includeUnsubscribed: true, limit: 1000 }))
    byFeed.set(entity.feed_url, [...(byFeed.get(entity.feed_url) ?? []), entity]);
  return byFeed;
}

const sameInstant = (a: string | undefined, b: string): boolean =>
  a !== undefined && parseRfc3339Micros(a) === parseRfc3339Micros(b);

/** The actions whose effect is not what their answers said: a description of each (none when all
 * are as answered). `entities` are the users' subscriptions by user id, then by feed URL. */
export function wrongSyncActions(
  actions: readonly SentAction[],
  entities: ReadonlyMap<string, ReadonlyMap<string, readonly WireEntity[]>>,
): string[] {
  const unsubscribes = new Map(
    actions
      .filter((a) => a.kind === 'sync-unsubscribe')
      .map((a) => [`${a.user.id} ${String(a.action.data.sync_id)}`, a]),
  );
  const wrong: string[] = [];
  for (const sent of actions) {
    const what = `${sent.action.action} ${sent.action.action_id} (${sent.attempts.map((a) => a.status).join(', ')})`;
    const held = entities.get(sent.user.id)?.get(sent.feedUrl) ?? [];
    if (held.length > 1) wrong.push(`${what}: ${held.length} subscriptions of ${sent.feedUrl}`);
    const [entity] = held;
    if (sent.acknowledged !== undefined && sent.acknowledged.sync?.status !== 'applied')
      wrong.push(`${what}: acknowledged as ${String(sent.acknowledged.sync?.status)}, not applied`);
    if (sent.kind === 'sync-subscribe') {
      if (entity === undefined) {
        if (sent.acknowledged !== undefined) wrong.push(`${what}: acknowledged, but no subscription`);
        continue;
      }
      if (!sameInstant(entity.subscribed_at, sent.action.occurred_at))
        wrong.push(`${what}: subscribed_at ${entity.subscribed_at}, not ${sent.action.occurred_at}`);
      if (sent.acknowledged !== undefined && entity.sync_id !== sent.acknowledged.sync?.syncId)
        wrong.push(`${what}: sync_id ${entity.sync_id}, not the answered ${sent.acknowledged.sync?.syncId}`);
      const unsubscribe = unsubscribes.get(`${sent.user.id} ${entity.sync_id}`);
      const unsubscribed =
        entity.unsubscribed_at === undefined
          ? unsubscribe?.acknowledged === undefined
          : unsubscribe !== undefined && sameInstant(entity.unsubscribed_at, unsubscribe.action.occurred_at);
      if (!unsubscribed)
        wrong.push(
          `${what}: unsubscribed_at ${entity.unsubscribed_at}, its unsubscribe ${unsubscribe?.action.occurred_at}`,
        );
    } else if (
      sent.acknowledged !== undefined &&
      !sameInstant(entity?.unsubscribed_at, sent.action.occurred_at)
    )
      wrong.push(`${what}: unsubscribed_at ${entity?.unsubscribed_at}, not ${sent.action.occurred_at}`);
  }
  return wrong;
}

/** Sends every acknowledged action of each user again (30 to a request, from a new Client-ID) to
 * the API process at `url`: answers the ones whose result is not their first status. */
export async function resendAcknowledged(url: string, actions: readonly SentAction[]): Promise<string[]> {
  const wrong: string[] = [];
  const byUser = new Map<LoadUser, SentAction[]>();
  for (const sent of actions)
    if (sent.acknowledged !== undefined) byUser.set(sent.user, [...(byUser.get(sent.user) ?? []), sent]);
  for (const [user, sent] of byUser) {
    const client = new SyncClient(new ApiClient(url, `Bearer ${user.token}`));
    for (let i = 0; i < sent.length; i += 30) {
      const chunk = sent.slice(i, i + 30);
      const results = await client.sync(chunk.map((s) => s.action));
      results.forEach((result, n) => {
        const first = chunk[n]!.acknowledged!.sync!;
        if (
          result.status !== first.status ||
          (first.syncId !== undefined && result.data.sync_id !== first.syncId)
        )
          wrong.push(
            `${result.action_id}: sent again, ${result.status} ${result.data.sync_id}, first ${first.status} ${first.syncId}`,
          );
      });
    }
  }
  return wrong;
}
