// Convergence of the sync face, on the decider alone: clients with their own clocks act offline,
// lose answers and retry, and upload in any order; once all have uploaded and pulled, each one's
// view is the server's, and the server's state is the last-write-wins fold of every action.
import fc from 'fast-check';
import { SyncActionsPosted } from '../events/log-event';
import { decide } from '../subscriptions/subscription.decider';
import { Draft, initialState } from '../subscriptions/evolve';
import { SyncEntity } from '../subscriptions/outcome';
import { latestGuid } from '../subscriptions/resolve';
import { UserSubscriptions } from '../subscriptions/subscription';
import { T0, USER } from '../testing';
import {
  expectedFold,
  runScenario,
  scenarioArbitrary,
  SyncTransport,
  WireEntity,
  WireResult,
} from '../testing/sync-clients';
import { nextInstant, parseRfc3339Micros, toIsoMicros } from '../time';
import { entityOf } from './sync-view';

const toWire = (entity: SyncEntity): WireEntity => ({
  sync_id: entity.syncId,
  guid: entity.guid,
  feed_url: entity.feedUrl,
  subscribed_at: toIsoMicros(entity.subscribedAt),
  ...(entity.unsubscribedAt !== null ? { unsubscribed_at: toIsoMicros(entity.unsubscribedAt) } : {}),
});

/** The decider as the server: each POST one event at true time, each pull read from the state. */
class DeciderServer implements SyncTransport {
  state: UserSubscriptions = initialState(USER);
  private sequence = 0;

  constructor(private readonly clock: { now: number }) {}

  async post(clientId: string, actions: readonly unknown[]): Promise<readonly WireResult[]> {
    const event: SyncActionsPosted = { type: 'SyncActionsPosted', userId: USER, clientId, actions };
    const now = nextInstant(this.clock.now, this.state.lastInstant);
    const decision = decide(this.state, { event, sequence: ++this.sequence }, now);
    this.state = new Draft(this.state).apply(decision.changes).state;
    return decision.outcome.results.map((result) => ({
      action_id: result.actionId,
      status: result.status,
      data:
        result.entity !== undefined ? toWire(result.entity) : (result.sentData as Record<string, unknown>),
    }));
  }

  async pull(clientId: string, since: string | undefined) {
    const after = since === undefined ? -1 : (parseRfc3339Micros(since) ?? -1);
    const changed = [...this.state.subscriptions.values()]
      .filter((s) => s.syncCursor > after && s.lastClientId !== clientId)
      .sort((a, b) => a.syncCursor - b.syncCursor);
    const last = changed[changed.length - 1];
    return {
      entities: changed.map((s) => toWire(entityOf(s))),
      ...(last !== undefined ? { since: toIsoMicros(last.syncCursor) } : {}),
    };
  }
}

const clientId = (n: number): string => `${'abc'[n]?.repeat(8)}-0000-4000-8000-000000000000`;

it('every client ends with the server view, and the server with the last-write-wins fold', async () => {
  await fc.assert(
    fc.asyncProperty(scenarioArbitrary(60), async (scenario) => {
      const clock = { now: T0 };
      const server = new DeciderServer(clock);
      let actions = 0;
      const action = (): string => `a0000000-0000-4000-8000-${(++actions).toString(16).padStart(12, '0')}`;
      const { views, delivered } = await runScenario(scenario, server, clock, { client: clientId, action });

      const entities = [...server.state.subscriptions.values()];
      const serverView = new Map(entities.map((s) => [s.syncId, toWire(entityOf(s))]));
      for (const view of views) expect(view).toEqual(serverView);

      const fold = expectedFold(delivered);
      expect(
        new Map(
          entities.map((s) => [latestGuid(s), { subscribed: s.unsubscribedAt === null, feedUrl: s.feedUrl }]),
        ),
      ).toEqual(fold);
    }),
    { numRuns: 500 },
  );
});
